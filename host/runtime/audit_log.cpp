#include "runtime/audit_log.h"

#include <utility>

namespace crank::runtime {

AuditLog::AuditLog(std::shared_ptr<store::Store> store, std::int64_t sample_reads,
                   std::shared_ptr<AuditWriter> writer)
    : store_(std::move(store)),
      sample_reads_(sample_reads < 1 ? 1 : sample_reads),
      writer_(std::move(writer)) {}

bool AuditLog::isSampledRead(std::string_view action) {
    return action == "session.poll" || action == "job.status";
}

bool AuditLog::keep(const store::AuditEvent& event) {
    if (sample_reads_ <= 1 || event.outcome != "ok" || !isSampledRead(event.action)) {
        return true;
    }
    std::string key = event.workspace_id;
    key += '\n';
    key += event.agent_id;
    key += '\n';
    key += event.action;
    const std::lock_guard lock(mutex_);
    std::int64_t& seen = seen_[key];
    const bool record = seen % sample_reads_ == 0;
    seen = (seen + 1) % sample_reads_;
    return record;
}

Result<void> AuditLog::append(store::AuditEvent event) {
    if (!store_ || !keep(event)) {
        return {};
    }
    if (sample_reads_ > 1 && isSampledRead(event.action) && event.outcome == "ok") {
        // The detail is a JSON object written by the runtime: add the rate before its end, so
        // that a reader knows each recorded read stands for up to N.
        const std::string rate = "\"sample_every\":" + std::to_string(sample_reads_);
        std::string& detail = event.detail_json;
        if (detail.size() >= 2 && detail.front() == '{' && detail.back() == '}') {
            detail.insert(detail.size() - 1, detail.size() == 2 ? rate : "," + rate);
        }
    }
    if (writer_) {
        writer_->submit(std::move(event));
        return {};
    }
    auto appended = store_->appendAudit(std::move(event));
    if (!appended) {
        return appended.error();
    }
    return {};
}

void AuditLog::flush() {
    if (writer_) {
        writer_->flush();
    }
}

}  // namespace crank::runtime
