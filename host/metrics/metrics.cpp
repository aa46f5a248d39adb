#include "metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

namespace crank::metrics {
namespace {

std::string number(double v) {
    if (std::isinf(v)) {
        return v > 0 ? "+Inf" : "-Inf";
    }
    if (std::isnan(v)) {
        return "NaN";
    }
    if (v == std::floor(v) && std::fabs(v) < 1e15) {
        return fmt::format("{}", static_cast<std::int64_t>(v));
    }
    return fmt::format("{}", v);
}

void appendLabels(std::string& out, const Labels& labels, std::string_view extraName = {},
                  std::string_view extraValue = {}) {
    if (labels.empty() && extraName.empty()) {
        return;
    }
    out += '{';
    bool first = true;
    for (const auto& [name, value] : labels) {
        out += first ? "" : ",";
        first = false;
        out += name;
        out += "=\"";
        out += escapeLabelValue(value);
        out += '"';
    }
    if (!extraName.empty()) {
        out += first ? "" : ",";
        out += extraName;
        out += "=\"";
        out += extraValue;
        out += '"';
    }
    out += '}';
}

std::string escapeHelp(std::string_view help) {
    std::string out;
    for (const char c : help) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace

std::string escapeLabelValue(std::string_view value) {
    std::string out;
    out.reserve(value.size());
    for (const char c : value) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '"') {
            out += "\\\"";
        } else if (c == '\n') {
            out += "\\n";
        } else {
            out += c;
        }
    }
    return out;
}

std::vector<double> latencyBuckets() {
    return {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {
    std::sort(bounds_.begin(), bounds_.end());
}

void Histogram::observe(double value) {
    const auto at = std::lower_bound(bounds_.begin(), bounds_.end(), value);
    counts_[static_cast<std::size_t>(at - bounds_.begin())].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(value, std::memory_order_relaxed);
}

std::vector<std::uint64_t> Histogram::cumulative() const {
    std::vector<std::uint64_t> out;
    out.reserve(counts_.size());
    std::uint64_t total = 0;
    for (const auto& c : counts_) {
        total += c.load(std::memory_order_relaxed);
        out.push_back(total);
    }
    return out;
}

Registry::Family& Registry::family(std::string_view name, std::string_view help,
                                   std::string_view type) {
    auto it = families_.find(name);
    if (it == families_.end()) {
        it = families_.emplace(std::string(name), Family{}).first;
        it->second.help = std::string(help);
        it->second.type = std::string(type);
    } else if (it->second.type != type) {
        throw std::logic_error("metric " + std::string(name) + " is a " + it->second.type +
                               ", not a " + std::string(type));
    }
    return it->second;
}

Counter& Registry::counter(std::string_view name, std::string_view help, const Labels& labels) {
    const std::lock_guard lock(mutex_);
    Family& f = family(name, help, "counter");
    auto& slot = f.counters[capped(f.counters, labels)];
    if (!slot) {
        slot = std::make_unique<Counter>();
    }
    return *slot;
}

Histogram& Registry::histogram(std::string_view name, std::string_view help,
                               const std::vector<double>& bounds, const Labels& labels) {
    const std::lock_guard lock(mutex_);
    Family& f = family(name, help, "histogram");
    auto& slot = f.histograms[capped(f.histograms, labels)];
    if (!slot) {
        slot = std::make_unique<Histogram>(bounds);
    }
    return *slot;
}

void Registry::gauge(std::string_view name, std::string_view help, Collect collect) {
    const std::lock_guard lock(mutex_);
    family(name, help, "gauge").collect = std::move(collect);
}

std::string Registry::render() const {
    // The gauges' callbacks run without the lock: they may take their components' locks.
    std::vector<std::pair<std::string, Collect>> gauges;
    std::string out;
    {
        const std::lock_guard lock(mutex_);
        for (const auto& [name, f] : families_) {
            if (f.type == "gauge") {
                gauges.emplace_back(name, f.collect);
            }
        }
    }
    std::map<std::string, std::vector<std::pair<Labels, double>>> gaugeValues;
    for (const auto& [name, collect] : gauges) {
        if (collect) {
            gaugeValues[name] = collect();
        }
    }
    const std::lock_guard lock(mutex_);
    for (const auto& [name, f] : families_) {
        out += "# HELP " + name + " " + escapeHelp(f.help) + "\n";
        out += "# TYPE " + name + " " + f.type + "\n";
        if (f.type == "counter") {
            for (const auto& [labels, c] : f.counters) {
                out += name;
                appendLabels(out, labels);
                out += " " + number(c->value()) + "\n";
            }
        } else if (f.type == "histogram") {
            for (const auto& [labels, h] : f.histograms) {
                const std::vector<std::uint64_t> counts = h->cumulative();
                for (std::size_t i = 0; i < counts.size(); ++i) {
                    out += name + "_bucket";
                    appendLabels(out, labels, "le",
                                 i < h->bounds().size() ? number(h->bounds()[i]) : "+Inf");
                    out += " " + std::to_string(counts[i]) + "\n";
                }
                out += name + "_sum";
                appendLabels(out, labels);
                out += " " + number(h->sum()) + "\n";
                out += name + "_count";
                appendLabels(out, labels);
                out += " " + std::to_string(counts.back()) + "\n";
            }
        } else if (const auto it = gaugeValues.find(name); it != gaugeValues.end()) {
            for (const auto& [labels, value] : it->second) {
                out += name;
                appendLabels(out, labels);
                out += " " + number(value) + "\n";
            }
        }
    }
    return out;
}

}  // namespace crank::metrics
