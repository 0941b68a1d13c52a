// Server-Sent Events over the event bus: what GET /api/v1/events streams.
#pragma once
#include <memory>

#include "daemon/events.h"
#include "http/http.h"

namespace gauntlet::api {

// An SSE stream of `sub`'s events: a "retry" line first, then `id:`/`event:`/`data:` frames, keep-alives
// as comments, and an `overflow` event before the end of a follower cut off for falling behind.
// Owns `sub` (whose bus must outlive the stream); the server closes it (Stream::Close) when the
// stream ends or the client goes away.
std::shared_ptr<http::Stream> SseStream(std::shared_ptr<daemon::EventBus::Subscription> sub);

}  // namespace gauntlet::api
