// Writing the text of many items, rendered on two threads, in their order.
//
// The summary of a capture of a whole cluster is the text of hundreds of
// thousands of conversations: each summarised (its channels' medians, rate
// bins) and formatted, most of the time spent waiting for the channels'
// state to come from memory. By then the reading thread has finished, so
// its core is idle. The items are split into blocks; a second thread
// renders the odd blocks while the caller renders the even ones, and the
// caller writes every block in turn, so the text is exactly what rendering
// them one after the other on one thread gives. The second thread runs at
// most a few blocks ahead: memory stays bounded whatever the count.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace rdmapcap {

/// Renders items 0 .. n-1, `render(i, out)` appending item i's text to
/// `out`, and hands the text to `write` in item order, a block of `block`
/// items at a time, always on the caller's thread. `render` is called from
/// two threads at once (on different items), so it may only read what they
/// share. Without a second core, or when no thread can be started, all is
/// rendered on the caller's thread. An exception thrown by `render` on
/// either thread reaches the caller, after the blocks before it were written.
void render_in_order(std::size_t n, const std::function<void(std::size_t, std::string&)>& render,
                     const std::function<void(std::string_view)>& write, std::size_t block = 256);

}  // namespace rdmapcap
