#include "http/stream_handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <ostream>
#include <string>
#include <system_error>

#include <Poco/Exception.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerRequestImpl.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/StreamSocket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace crank::http {

Result<int> takeOverConnection(Poco::Net::HTTPServerRequest& request,
                               Poco::Net::HTTPServerResponse& response) {
    auto* served = dynamic_cast<Poco::Net::HTTPServerRequestImpl*>(&request);
    if (served == nullptr) {
        return Error{ErrorCode::invalid_argument,
                     "takeOverConnection: the request does not come from Poco's HTTPServer, so "
                     "there is no connection to take over"};
    }
    if (response.sent()) {
        return Error{ErrorCode::conflict,
                     "takeOverConnection: the response was already sent; call it instead of "
                     "sending the response"};
    }
    try {
        response.setChunkedTransferEncoding(false);
        response.setContentLength(Poco::Net::HTTPMessage::UNKNOWN_CONTENT_LENGTH);
        response.setKeepAlive(false);
        std::ostream& head = response.send();
        head.flush();
        if (!head.good()) {
            return Error{ErrorCode::io,
                         "takeOverConnection: the client went away before the response head "
                         "could be sent"};
        }
        // From here Poco's session has an empty socket: the response stream's shutdownSend() at
        // destruction fails on it (and Poco swallows that) instead of sending a FIN.
        const Poco::Net::StreamSocket socket = served->detachSocket();
        const int fd = ::fcntl(socket.impl()->sockfd(), F_DUPFD_CLOEXEC, 0);
        if (fd < 0) {
            const int err = errno;
            return Error{ErrorCode::io, "takeOverConnection: cannot duplicate the connection: " +
                                            std::generic_category().message(err)};
        }
        // Poco's connection object keeps its own reference to the socket and shuts it down when
        // the server stops (onServerStopped), which would cut the stream we now own (a FIN before
        // the reactor flushed the last events). Point Poco's descriptor number at a fresh,
        // unconnected socket instead: whatever Poco does to it later touches nothing of ours.
        const int original = socket.impl()->sockfd();
        const int inert = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (inert >= 0) {
            ::dup3(inert, original, O_CLOEXEC);
            ::close(inert);
        }
        const int on = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);  // fails harmlessly off TCP
        return fd;
    } catch (const Poco::Exception& e) {
        return Error{ErrorCode::io,
                     "takeOverConnection: cannot send the response head: " + e.displayText()};
    }
}

}  // namespace crank::http
