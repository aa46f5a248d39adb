#pragma once

// subscriptions/listen of MCP 2026-07-28 (SEP-2575): the era's one way for a server to tell a
// client something unasked. A listen is a request whose SSE stream stays open: first
// notifications/subscriptions/acknowledged with the kinds the server honours, then every
// notification of those kinds, each tagged with the listen request's id in
// `_meta["io.modelcontextprotocol/subscriptionId"]`. The client ends it by closing the stream.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/catalog.h"
#include "mcp/request_stream.h"
#include "util/error.h"

namespace crank::mcp {

/// The task ids one listen may follow, at most (notifications.taskIds of the Tasks extension).
inline constexpr std::size_t kMaxListenTaskIds = 64;
/// The resources one listen may subscribe to (notifications.resourceSubscriptions), at most, and
/// the longest URI.
inline constexpr std::size_t kMaxListenResources = 64;
inline constexpr std::size_t kMaxListenUriBytes = 2048;

/// The kinds of notification a listen asks for (params.notifications).
struct ListenFilter {
    bool tools_list_changed = false;
    bool prompts_list_changed = false;
    bool resources_list_changed = false;
    /// notifications/tasks for these tasks (the Tasks extension), each at most 256 bytes.
    std::vector<std::string> task_ids;
    /// notifications/resources/updated for these resources (the catalog's subscriptions).
    std::vector<std::string> resource_uris;
};

/// Reads params.notifications of a subscriptions/listen request (`params_json`; "" reads as
/// none asked). invalid_argument naming the member when notifications is not an object, a kind
/// is not a boolean, taskIds is not an array of at most kMaxListenTaskIds strings of at most 256
/// bytes, or resourceSubscriptions not one of at most kMaxListenResources strings of at most
/// kMaxListenUriBytes. Repeated strings are kept once.
Result<ListenFilter> parseListenFilter(std::string_view params_json);

/// The subscriber a listen is to a catalog (Catalog::handle's session id for its
/// resources/subscribe, Catalog::forget when it ends): "listen:" and its key.
std::string listenSubscriber(std::uint64_t key);

/// The params of notifications/subscriptions/acknowledged: the honoured kinds, tagged with
/// `listen_id_json` (the listen request's id as JSON).
std::string acknowledgement(const ListenFilter& honoured, std::string_view listen_id_json);

/// `notification_method`'s message for the listen of `listen_id_json`, with `params_json` (an
/// object or "") tagged with the subscriptionId in its _meta.
std::string tagged(std::string_view notification_method, std::string_view params_json,
                   std::string_view listen_id_json);

/// The open listens of one node, by workspace. A listen holds no thread: its stream is the
/// reactor's, and it leaves the hub when that stream ends.
///
/// THREADING: any thread.
class ListenHub {
public:
    /// A key for a listen about to be added (its subscriber name is known before it joins).
    std::uint64_t reserve();
    /// Keeps a listen of `workspace` under `key` (from reserve()) until remove(). `first` (the
    /// acknowledgement) goes on the stream as it joins, so that it comes before any notification
    /// and no notice sent after it is missed.
    /// `agent`: who opened it (tasks are followed for their owner only). `subscribed_on`: the
    /// catalog its filter's resources were subscribed on as listenSubscriber(key), which
    /// forgets them when the listen is removed; null when none were.
    void add(std::uint64_t key, const std::string& workspace, const std::string& agent,
             const ListenFilter& filter, std::string listen_id_json,
             std::shared_ptr<RequestStream> stream, std::string_view first,
             Catalog* subscribed_on = nullptr);
    void remove(std::uint64_t key);

    /// notifications/tools/list_changed to the listens of `workspace` that asked for it.
    void toolsChanged(const std::string& workspace);
    /// A catalog's list_changed notice to the listens of `workspace` that asked for it, and its
    /// resources/updated to the listens among the notice's subscribers (listenSubscriber) that
    /// subscribed to the resource; other notices have no listen kind and are not sent.
    void deliver(const std::string& workspace, const CatalogNotice& notice);
    /// Task `task_id` of `owner` changed: notifications/tasks to the owner's listens that follow
    /// it, with what `detailed` gives (called once, and only when such a listen is open;
    /// nullopt: nothing is sent).
    using DetailedTask = std::function<std::optional<std::string>()>;
    void taskChanged(const std::string& task_id, const Caller& owner, const DetailedTask& detailed);

    std::size_t size() const;

private:
    struct Listen {
        std::string workspace;
        std::string agent;
        ListenFilter filter;
        std::string id_json;
        std::shared_ptr<RequestStream> stream;
        Catalog* subscribed_on = nullptr;
    };
    void resourceUpdated(const std::string& workspace, const CatalogNotice& notice);
    /// Sends `method` to the listens of `workspace` whose filter `wants`.
    template <typename Wants>
    void send(const std::string& workspace, std::string_view method, Wants wants);

    using Index = std::map<std::string, std::set<std::uint64_t>, std::less<>>;
    /// Drops `key` from `index[name]`, and the entry when it is left empty (under mutex_).
    static void unindex(Index& index, const std::string& name, std::uint64_t key);

    mutable std::mutex mutex_;
    std::map<std::uint64_t, Listen> listens_;
    /// The listens of a workspace, and those following a task: an event visits its own only.
    Index by_workspace_;
    Index by_task_;
    std::uint64_t next_ = 1;
};

}  // namespace crank::mcp
