#pragma once

// The server's requests to clients (sampling/createMessage, elicitation/create, roots/list) and
// the calls in flight they may be for: which call's client answers, on threads of their own,
// bounded in number and in time.
//
// A request the transport ties to a call (one on the SSE stream of a Streamable HTTP POST) goes
// to that call. Where the wire ties nothing (stdio, legacy SSE, the Streamable HTTP GET stream),
// it is for one of the calls in flight when it arrived: with exactly one, that call's; with
// several, it waits until only one of them is still in flight, the others having been answered
// by the server (a call the server answered did not wait on this request, so the one left is the
// one that asked), at most `unrouted_wait`. It is refused after that, when all of them ended, or
// as soon as one of them ends without the server's answer (cancelled, timed out, its connection
// gone): that call may be the one that asked, and its question must not reach another client. A
// question already put to one of those calls' clients keeps the wait going while it is unanswered,
// so it gets at most `blocking_question` more from the moment another request starts waiting behind
// it; then its server is answered with an error (the client's late answer is dropped), so that its
// call can end. A request the server cancels (notifications/cancelled) while it waits is dropped.
//
// THREADING: every member may be called from any thread.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <crank/sdk.hpp>

namespace crank::mcpc {

class ClientRequests {
public:
    struct Options {
        /// Requests handled at once (waiting or asking); more are refused.
        std::size_t max_requests = 16;
        /// The longest a client is given to answer.
        std::chrono::milliseconds answer_timeout{30'000};
        /// The longest a request waits to be tied to one call.
        std::chrono::milliseconds unrouted_wait{30'000};
        /// How much longer a question keeps a request waiting behind it.
        std::chrono::milliseconds blocking_question{15'000};
    };
    /// Sends a message to the server (the answer to one of its requests).
    using Send = std::function<void(const std::string& message_json)>;

    /// One call in flight to the server.
    struct Flight {
        sdk::Call call;
        std::string progress_token;  ///< ours, "" when the client asked for none
        bool answered = false;       ///< it ended with the server's answer (under the lock)
    };

    ClientRequests(Options options, Send send);
    /// close(), then waits until no thread of this object runs.
    ~ClientRequests();
    ClientRequests(const ClientRequests&) = delete;
    ClientRequests& operator=(const ClientRequests&) = delete;
    ClientRequests(ClientRequests&&) = delete;
    ClientRequests& operator=(ClientRequests&&) = delete;

    /// A call is sent to the server: requests may route to it from now on.
    std::shared_ptr<Flight> begin(sdk::Call call, std::string progress_token);
    /// The call ended: nothing routes to it any more. `answered`: the server answered it (a
    /// result or an error), rather than it being cancelled, timed out or cut off. Returns once
    /// no request uses its call.
    void end(const std::shared_ptr<Flight>& flight, bool answered);
    /// The flight whose (our) progress token is `token`; null when none.
    std::shared_ptr<Flight> byToken(const std::string& token) const;
    /// The only call in flight; null when there are none or several.
    std::shared_ptr<Flight> sole() const;

    /// The server's request `id_json` (its id as JSON text): answered by the client of `related`
    /// when not null, else of the call it is found to be for (see above), on a thread of its own.
    void handle(const std::string& id_json, const std::string& method, const std::string& params,
                const std::shared_ptr<Flight>& related);
    /// The server gave up its request `id_json` (notifications/cancelled).
    void cancelled(const std::string& id_json);
    /// Refuses every request from now on, wakes those waiting; waits until none runs.
    void close();

private:
    struct Question {
        std::shared_ptr<Flight> flight;
        std::chrono::steady_clock::time_point cut_at = std::chrono::steady_clock::time_point::max();
        bool answered = false;  ///< the server has its answer (the client's or a refusal)
    };

    void run(const std::string& id_json, const std::string& method, const std::string& params,
             std::shared_ptr<Flight> flight);
    /// Waits until the request is tied to one of `candidates`; null when refused or dropped
    /// (the server was answered).
    std::shared_ptr<Flight> route(const std::string& id_json, const std::string& method,
                                  std::vector<std::shared_ptr<Flight>> candidates);
    void ask(const std::string& id_json, const std::string& method, const std::string& params,
             const std::shared_ptr<Flight>& flight);
    void finished();

    const Options options_;
    const Send send_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;  ///< flights, questions, cancellations, close
    std::vector<std::shared_ptr<Flight>> flights_;
    std::map<std::string, std::shared_ptr<Flight>> by_token_;
    std::map<const Flight*, int> users_;                          ///< requests using a call
    std::map<std::string, std::shared_ptr<Question>> questions_;  ///< by the server's id
    std::set<std::string> cancelled_;                             ///< ids given up while waiting
    std::set<std::string> waiting_;                               ///< ids waiting to be routed
    std::size_t running_ = 0;
    bool closing_ = false;
};

}  // namespace crank::mcpc
