#pragma once

// The keep-alive fast path of a worker. Once the client's next request begins to arrive on the
// connection the worker served (the worker parked there, parked_workers.h, or the bytes came
// pipelined behind the last request), the worker reads it for a moment
// (`server.keep_alive_wait_us`): a request that arrives whole within it (an MCP client
// mid-conversation, a load balancer's pooled connection) is then served by the same worker, without
// the connection going back to the gate and waiting for another worker. Only a request the gate
// would hand on as it is qualifies: its head whole and accepted by scanRequestHead, its small body
// read ahead, its address not throttled for failed authentications. Anything else (a slow head, a
// refused framing, a throttled address, the wait over) leaves the bytes read so far in the
// connection's read-ahead, and the caller gives the connection back to the gate, which goes on from
// there and answers what must be answered. So the gate's bounds hold on this path too, and a slow
// client holds a worker for at most the wait.

#include <chrono>

#include "http/client_socket.h"
#include "http/connection_gate.h"

namespace crank::http {

/// Waits up to `wait` for the next request of `client` (a blocking socket whose response was
/// just sent, its leftover bytes unread()). True when that request is ready to be served: its
/// body pace started as the gate starts it. False otherwise (see above); nothing is lost.
bool awaitNextRequest(ClientSocketImpl& client, const ConnectionGateOptions& options,
                      std::chrono::microseconds wait);

}  // namespace crank::http
