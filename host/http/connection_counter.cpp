#include "http/connection_counter.h"

namespace crank::http {

ConnectionCounter::ConnectionCounter(std::size_t max_connections, std::size_t max_per_address)
    : max_connections_(max_connections), max_per_address_(max_per_address) {}

ConnectionCounter::Slot::Slot(std::shared_ptr<ConnectionCounter> counter, std::string address)
    : counter_(std::move(counter)), address_(std::move(address)) {}

ConnectionCounter::Slot::~Slot() {
    counter_->release(address_);
}

std::unique_ptr<ConnectionCounter::Slot> ConnectionCounter::admit(
    const std::shared_ptr<ConnectionCounter>& counter, const std::string& address,
    Refusal& refusal) {
    {
        std::lock_guard lock(counter->mutex_);
        if (counter->open_ >= counter->max_connections_) {
            refusal = Refusal::too_many;
            return nullptr;
        }
        std::size_t& mine = counter->per_address_[address];
        if (mine >= counter->max_per_address_) {
            if (mine == 0) {
                counter->per_address_.erase(address);
            }
            refusal = Refusal::too_many_from_address;
            return nullptr;
        }
        ++mine;
        ++counter->open_;
    }
    refusal = Refusal::none;
    return std::make_unique<Slot>(counter, address);
}

void ConnectionCounter::release(const std::string& address) {
    std::lock_guard lock(mutex_);
    --open_;
    const auto it = per_address_.find(address);
    if (it != per_address_.end() && --it->second == 0) {
        per_address_.erase(it);
    }
}

std::size_t ConnectionCounter::open() const {
    std::lock_guard lock(mutex_);
    return open_;
}

std::size_t ConnectionCounter::openFrom(const std::string& address) const {
    std::lock_guard lock(mutex_);
    const auto it = per_address_.find(address);
    return it == per_address_.end() ? 0 : it->second;
}

}  // namespace crank::http
