#pragma once

#include "util/error.h"

namespace Poco::Net {
class HTTPServerRequest;
class HTTPServerResponse;
}  // namespace Poco::Net

namespace crank::http {

/// Ends Poco's part in an HTTP exchange that answers with a long-lived `text/event-stream` body,
/// and returns the connection as a descriptor for StreamReactor::adopt().
///
/// PRECONDITION: the handler has set the status and every header of the response
/// (Content-Type: text/event-stream, Cache-Control: no-cache, Mcp-Session-Id, ...) and has not
/// sent it; it has read the request body it needs (any bytes left unread are later discarded).
/// The status must be one with a body (200 for SSE) and the request not a HEAD: for those Poco
/// writes a fixed-length empty body instead, and the stream would carry nothing.
///
/// What it does: turns keep-alive off (the head says `Connection: close`; the body has neither
/// Content-Length nor chunked encoding, so it ends when the connection closes), sends the head
/// and flushes it, detaches the socket from Poco's session, and returns a duplicate of the
/// socket's descriptor (O_CLOEXEC, TCP_NODELAY set so that small events are not held back).
/// Detaching matters: Poco's response stream shuts the socket's sending side down (FIN) when
/// the response object is destroyed, and a shutdown, unlike close(), ends the TCP connection for
/// every duplicate. Once detached, Poco only close()s its own descriptor, which leaves the
/// connection to the duplicate.
///
/// OWNERSHIP: the caller owns the returned descriptor (normally: passes it to adopt() at once).
/// After a successful call the handler must not touch the response or the request streams
/// again, and should return promptly: the Poco worker thread is then free for other connections.
/// If the server is stopped in the short window before the handler has returned, Poco's stop
/// (and HttpServer's abort of connections past their grace) still shuts the connection down.
///
/// ERRORS: invalid_argument when the request is not served by Poco's HTTPServer (no
/// HTTPServerRequestImpl); conflict when the response was already sent; io when the client went
/// away before the head could be written, or the descriptor cannot be duplicated (e.g. the
/// process is out of descriptors). On error the handler should just return; Poco closes the
/// connection.
///
/// THREADING: call it on the thread that runs the handler, like any response method.
Result<int> takeOverConnection(Poco::Net::HTTPServerRequest& request,
                               Poco::Net::HTTPServerResponse& response);

}  // namespace crank::http
