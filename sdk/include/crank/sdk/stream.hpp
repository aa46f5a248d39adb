// Crank SDK, C++ layer: an open upstream stream, as the host drives it.
#pragma once

#include "crank/sdk/call.hpp"

namespace crank::sdk {

/// A plugin's open server stream (CRANK_CAP_SERVER_STREAM), returned by Adapter::openStream().
/// The layer owns it from then on and deletes it in stream_destroy, which the host calls once,
/// after complete().
///
/// The plain Stream leaves everything to you: read on your own thread(s), emit with the Call
/// handed to openStream (honouring EmitResult), call complete() exactly once, and make the
/// destructor join your threads. Most adapters want ThreadedStream instead, which does all that.
///
/// Threading: the host never calls start, resume, cancel and the destructor of one stream
/// concurrently, but it calls them on its threads while yours are running. None may block for
/// long. Exceptions thrown by them are logged on the call and otherwise ignored.
class Stream {
public:
    Stream() = default;
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    Stream(Stream&&) = delete;
    Stream& operator=(Stream&&) = delete;
    /// Called by stream_destroy, after complete(). Joins every thread of the stream.
    virtual ~Stream() = default;

    /// Called once by the layer right after openStream() returned this stream, with the same
    /// call. Throwing here fails the open (set_error, stream_open returns NULL, the stream is
    /// deleted, complete() must then not be called).
    virtual void start(Call /*call*/) {}
    /// The host has room again after EmitResult::accepted_pause or rejected_full.
    virtual void resume() {}
    /// The host wants the stream to stop: stop reading soon, then complete(cancelled). May come
    /// more than once, and after complete().
    virtual void cancel() = 0;
};

}  // namespace crank::sdk
