#include "item_parser.h"

#include <cstring>

#include <rapidjson/error/en.h>

#include "aggregate_error.h"

namespace crank::aggregators {

ItemParser::ItemParser()
    : value_buffer_(std::make_unique<char[]>(kValueBufferBytes)),
      stack_buffer_(std::make_unique<char[]>(kStackBufferBytes)),
      value_pool_(value_buffer_.get(), kValueBufferBytes),
      stack_pool_(stack_buffer_.get(), kStackBufferBytes),
      document_(std::make_unique<Document>(&value_pool_, 1024, &stack_pool_)) {}

ItemParser::~ItemParser() = default;

const rapidjson::Value& ItemParser::parse(std::string_view item_json) {
    document_->SetNull();
    value_pool_.Clear();
    stack_pool_.Clear();
    if (text_.capacity() > kMaxKeptTextBytes && item_json.size() <= kMaxKeptTextBytes) {
        std::string().swap(text_);
    }
    // In situ parsing stops at a NUL byte; JSON text never holds one raw.
    if (std::memchr(item_json.data(), '\0', item_json.size()) != nullptr) {
        throw AggregateError(AggregateError::Kind::invalid_item,
                             "item is not valid JSON: it contains a NUL byte");
    }
    text_.assign(item_json);
    document_->ParseInsitu(text_.data());
    if (document_->HasParseError()) {
        throw AggregateError(AggregateError::Kind::invalid_item,
                             std::string("item is not valid JSON: ") +
                                 rapidjson::GetParseError_En(document_->GetParseError()) +
                                 " at offset " + std::to_string(document_->GetErrorOffset()));
    }
    return *document_;
}

std::size_t ItemParser::memoryEstimate() const {
    return kValueBufferBytes + kStackBufferBytes + text_.capacity() + sizeof(Document);
}

}  // namespace crank::aggregators
