// crank-grpc-direct: the baseline of bench/run-grpc.sh, a gRPC load client for crank-grpc-fixture
// built on the same client library and calls as the gRPC plugin (GenericStub and ByteBuffer, no
// generated code; unary calls through the callback API, a stream as an async bidi call with one
// request), so that the ratio crankd : direct isolates what Crank adds around the same calls.
// Requests are serialized by hand (a few bytes of protobuf wire format).
//
//   crank-grpc-direct unary --target 127.0.0.1:PORT [--seconds S] [--in-flight N] [--threads T]
//       Echo {text: "bench"} with N calls always outstanding, over one channel (as the plugin
//       holds one channel per upstream), spread over T threads (default 2, as wrk -t2): each
//       thread checks the answers of its share and starts the next calls. 2 s of warm-up, then S
//       seconds (default 10). Prints "REQUESTS_PER_S P50_US P99_US ERRORS": calls completed in the
//       measured S seconds, their latency (start to completion), and the answers refused (a status
//       other than OK, or an answer without the text sent), counted over warm-up and measure alike.
//   crank-grpc-direct stream --target 127.0.0.1:PORT [--count N] [--payload-bytes P]
//       One Ticks {count: N, interval_ms: 0, payload_bytes: P} stream read as fast as it comes
//       (N default 200000, P default 100). Prints "MESSAGES_PER_S BYTES_PER_S" (the messages'
//       bytes, without gRPC framing) over the wall time from the call's start to its status.
//       Fails unless exactly N messages came and the status is OK.
//
// Loopback targets only. Every loop is bounded: each call has a deadline (30 s, a stream 600 s), a
// stream reads at most N + 1 messages.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>

namespace {

using Clock = std::chrono::steady_clock;  // gRPC deadlines take system_clock
using std::chrono::microseconds;
using std::chrono::seconds;

constexpr const char* kEchoMethod = "/crank.fixture.v1.Fixture/Echo";
constexpr const char* kTicksMethod = "/crank.fixture.v1.Fixture/Ticks";
constexpr std::string_view kEchoText = "bench";
constexpr seconds kWarmup{2};
constexpr seconds kCallDeadline{30};     // a unary call that takes longer is an error
constexpr seconds kStreamDeadline{600};  // the whole stream

struct Options {
    std::string mode;
    std::string target;
    long seconds = 10;
    long inFlight = 32;
    long threads = 2;
    long count = 200000;
    long payloadBytes = 100;
};

long parseNumber(std::string_view name, const char* text, long min, long max) {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < min || value > max) {
        throw std::runtime_error(std::string(name) + ": expected an integer in [" +
                                 std::to_string(min) + ", " + std::to_string(max) + "], got \"" +
                                 text + "\"");
    }
    return value;
}

bool isLoopback(const std::string& target) {
    return target.rfind("127.", 0) == 0 || target.rfind("localhost:", 0) == 0 ||
           target.rfind("[::1]:", 0) == 0;
}

Options parseOptions(int argc, char** argv) {
    if (argc < 2) {
        throw std::runtime_error("usage: crank-grpc-direct unary|stream --target HOST:PORT ...");
    }
    Options options;
    options.mode = argv[1];
    if (options.mode != "unary" && options.mode != "stream") {
        throw std::runtime_error("unknown mode \"" + options.mode + "\": unary or stream");
    }
    for (int i = 2; i < argc; i += 2) {
        const std::string_view flag = argv[i];
        if (i + 1 >= argc) {
            throw std::runtime_error(std::string(flag) + " needs a value");
        }
        const char* value = argv[i + 1];
        if (flag == "--target") {
            options.target = value;
        } else if (flag == "--seconds") {
            options.seconds = parseNumber(flag, value, 1, 3600);
        } else if (flag == "--in-flight") {
            options.inFlight = parseNumber(flag, value, 1, 10000);
        } else if (flag == "--threads") {
            options.threads = parseNumber(flag, value, 1, 64);
        } else if (flag == "--count") {
            options.count = parseNumber(flag, value, 1, 100'000'000);
        } else if (flag == "--payload-bytes") {
            options.payloadBytes = parseNumber(flag, value, 0, 1 << 20);
        } else {
            throw std::runtime_error("unknown option " + std::string(flag));
        }
    }
    if (!isLoopback(options.target)) {
        throw std::runtime_error(
            "--target must be a loopback address (127.x.x.x:PORT, "
            "localhost:PORT, [::1]:PORT), got \"" +
            options.target + "\"");
    }
    return options;
}

void appendVarint(std::string& out, std::uint64_t value) {
    while (value >= 0x80) {
        out.push_back(static_cast<char>((value & 0x7f) | 0x80));
        value >>= 7;
    }
    out.push_back(static_cast<char>(value));
}

/// EchoRequest {text: "bench"}: field 1, wire type 2 (length-delimited).
std::string echoRequest() {
    std::string out;
    out.push_back(0x0a);
    appendVarint(out, kEchoText.size());
    out.append(kEchoText);
    return out;
}

/// TicksRequest {count: 1 (varint), interval_ms: 2 left at 0, payload_bytes: 4 (varint)}.
std::string ticksRequest(long count, long payloadBytes) {
    std::string out;
    out.push_back(0x08);
    appendVarint(out, static_cast<std::uint64_t>(count));
    if (payloadBytes > 0) {
        out.push_back(0x20);
        appendVarint(out, static_cast<std::uint64_t>(payloadBytes));
    }
    return out;
}

grpc::ByteBuffer toByteBuffer(const std::string& bytes) {
    grpc::Slice slice(bytes);
    return grpc::ByteBuffer(&slice, 1);
}

std::string toString(const grpc::ByteBuffer& buffer) {
    std::vector<grpc::Slice> slices;
    std::string out;
    if (!buffer.Dump(&slices).ok()) {
        return out;
    }
    out.reserve(buffer.Length());
    for (const auto& slice : slices) {
        out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
    return out;
}

std::shared_ptr<grpc::Channel> makeChannel(const std::string& target) {
    return grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
}

// ---- unary ----------------------------------------------------------------------------------

/// One outstanding call: its context and answer live here until its callback hands it back.
struct Slot {
    std::unique_ptr<grpc::ClientContext> context;
    grpc::ByteBuffer response;
    grpc::Status status;
    Clock::time_point started;
};

struct WorkerResult {
    std::vector<std::int64_t> latenciesUs;  // calls completed inside the measured interval
    long errors = 0;
    std::string firstError;
};

/// Keeps its slots' Echo calls outstanding until `end`, then waits for the last ones. Calls go
/// through the callback API, as the plugin's unary calls do; the callback (on a gRPC thread) only
/// hands the slot back, and this thread checks the answer and starts the next call, so that a
/// context is never destroyed inside its own call's callback.
class UnaryWorker {
public:
    UnaryWorker(grpc::GenericStub& stub, const grpc::ByteBuffer& request, long slots)
        : stub_(stub), request_(request), slots_(static_cast<std::size_t>(slots)) {}

    void run(Clock::time_point measureFrom, Clock::time_point end) {
        for (auto& slot : slots_) {
            start(slot);
        }
        std::size_t outstanding = slots_.size();
        std::vector<Slot*> batch;
        while (outstanding > 0) {
            {
                std::unique_lock<std::mutex> lock(mutex_);
                // every call has a deadline, so every callback comes
                cv_.wait(lock, [&] { return !done_.empty(); });
                batch.swap(done_);
            }
            const auto now = Clock::now();
            for (Slot* slot : batch) {
                check(*slot, now, measureFrom, end);
                if (now < end) {
                    start(*slot);
                } else {
                    --outstanding;
                }
            }
            batch.clear();
        }
    }

    const WorkerResult& result() const { return result_; }

private:
    void start(Slot& slot) {
        slot.context = std::make_unique<grpc::ClientContext>();
        slot.context->set_deadline(std::chrono::system_clock::now() + kCallDeadline);
        slot.response.Clear();
        slot.started = Clock::now();
        stub_.UnaryCall(slot.context.get(), method_, grpc::StubOptions(), &request_, &slot.response,
                        [this, &slot](grpc::Status status) {
                            {
                                const std::lock_guard<std::mutex> lock(mutex_);
                                slot.status = std::move(status);
                                done_.push_back(&slot);
                            }
                            cv_.notify_one();
                        });
    }

    void check(const Slot& slot, Clock::time_point now, Clock::time_point measureFrom,
               Clock::time_point end) {
        if (!slot.status.ok() || toString(slot.response).find(kEchoText) == std::string::npos) {
            if (result_.errors++ == 0) {
                result_.firstError = slot.status.ok() ? "an answer without the text sent"
                                                      : std::to_string(slot.status.error_code()) +
                                                            " " + slot.status.error_message();
            }
        } else if (slot.started >= measureFrom && now <= end) {
            result_.latenciesUs.push_back(
                std::chrono::duration_cast<microseconds>(now - slot.started).count());
        }
    }

    grpc::GenericStub& stub_;
    const grpc::ByteBuffer& request_;
    const std::string method_ = kEchoMethod;
    std::vector<Slot> slots_;
    std::mutex mutex_;
    std::condition_variable cv_;
    std::vector<Slot*> done_;  // slots whose call completed, handed back by their callbacks
    WorkerResult result_;
};

std::int64_t percentile(const std::vector<std::int64_t>& sorted, double p) {
    if (sorted.empty()) {
        return 0;
    }
    // nearest rank: the value of rank ceil(p * n)
    auto rank = static_cast<std::size_t>(p * static_cast<double>(sorted.size()) + 0.999999);
    rank = std::clamp<std::size_t>(rank, 1, sorted.size());
    return sorted[rank - 1];
}

int runUnary(const Options& options) {
    auto channel = makeChannel(options.target);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + seconds(10))) {
        std::fprintf(stderr, "crank-grpc-direct: cannot connect to %s\n", options.target.c_str());
        return 1;
    }
    grpc::GenericStub stub(channel);
    const auto request = toByteBuffer(echoRequest());
    const long threads = std::min(options.threads, options.inFlight);
    const auto measureFrom = Clock::now() + kWarmup;
    const auto end = measureFrom + seconds(options.seconds);
    std::vector<std::unique_ptr<UnaryWorker>> workers;
    std::vector<std::thread> threadsRunning;
    for (long i = 0; i < threads; ++i) {
        // the in-flight calls shared out: the first threads take the remainder
        const long slots = options.inFlight / threads + (i < options.inFlight % threads ? 1 : 0);
        workers.push_back(std::make_unique<UnaryWorker>(stub, request, slots));
        threadsRunning.emplace_back(&UnaryWorker::run, workers.back().get(), measureFrom, end);
    }
    for (auto& thread : threadsRunning) {
        thread.join();
    }
    std::vector<std::int64_t> latencies;
    long errors = 0;
    for (const auto& worker : workers) {
        const auto& result = worker->result();
        latencies.insert(latencies.end(), result.latenciesUs.begin(), result.latenciesUs.end());
        if (result.errors > 0 && errors == 0) {
            std::fprintf(stderr, "crank-grpc-direct: first bad answer: %s\n",
                         result.firstError.c_str());
        }
        errors += result.errors;
    }
    std::sort(latencies.begin(), latencies.end());
    std::printf("%.1f %lld %lld %ld\n",
                static_cast<double>(latencies.size()) / static_cast<double>(options.seconds),
                static_cast<long long>(percentile(latencies, 0.50)),
                static_cast<long long>(percentile(latencies, 0.99)), errors);
    return errors > 0 ? 1 : 0;
}

// ---- stream ---------------------------------------------------------------------------------

/// Waits for `tag` on `queue`; false when the operation failed.
bool await(grpc::CompletionQueue& queue, void* tag) {
    void* got = nullptr;
    bool ok = false;
    if (!queue.Next(&got, &ok) || got != tag) {
        throw std::runtime_error("unexpected completion queue event");
    }
    return ok;
}

int runStream(const Options& options) {
    auto channel = makeChannel(options.target);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + seconds(10))) {
        std::fprintf(stderr, "crank-grpc-direct: cannot connect to %s\n", options.target.c_str());
        return 1;
    }
    grpc::GenericStub stub(channel);
    grpc::CompletionQueue queue;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kStreamDeadline);
    const auto request = toByteBuffer(ticksRequest(options.count, options.payloadBytes));
    // No generic server-streaming call in gRPC 1.51: a bidi call with one request is the same
    // on the wire.
    void* const tag = &context;
    const auto started = Clock::now();
    auto call = stub.PrepareCall(&context, kTicksMethod, &queue);
    call->StartCall(tag);
    if (!await(queue, tag)) {
        std::fprintf(stderr, "crank-grpc-direct: the stream did not start\n");
        return 1;
    }
    call->WriteLast(request, grpc::WriteOptions(), tag);
    if (!await(queue, tag)) {
        std::fprintf(stderr, "crank-grpc-direct: the request was not sent\n");
        return 1;
    }
    long messages = 0;
    long emptyMessages = 0;
    std::uint64_t bytes = 0;
    grpc::ByteBuffer message;
    while (messages <= options.count) {  // one read past N: the end of the stream, or an error
        call->Read(&message, tag);
        if (!await(queue, tag)) {
            break;
        }
        ++messages;
        bytes += message.Length();
        if (message.Length() == 0) {
            ++emptyMessages;
        }
    }
    if (messages > options.count) {
        context.TryCancel();
    }
    grpc::Status status;
    call->Finish(&status, tag);
    await(queue, tag);
    const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
    queue.Shutdown();
    void* got = nullptr;
    bool ok = false;
    while (queue.Next(&got, &ok)) {
    }
    if (messages != options.count || emptyMessages > 0 || !status.ok()) {
        std::fprintf(stderr, "crank-grpc-direct: %ld messages (%ld empty) of %ld, status %d %s\n",
                     messages, emptyMessages, options.count, static_cast<int>(status.error_code()),
                     status.error_message().c_str());
        return 1;
    }
    std::printf("%.1f %.1f\n", static_cast<double>(messages) / elapsed,
                static_cast<double>(bytes) / elapsed);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const auto options = parseOptions(argc, argv);
        return options.mode == "unary" ? runUnary(options) : runStream(options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "crank-grpc-direct: %s\n", e.what());
        return 2;
    }
}
