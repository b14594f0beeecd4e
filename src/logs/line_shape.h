// The shapes real logs come in, undone line by line before matching, private to src/logs: ANSI
// colour escapes, and the prefixes that tools put in front of every line — a multi-worker launch's
// worker address (`10.164.0.3 [1] `, `[worker-3] `), pytest's failure marker (`E   `), the
// Kaggle log viewer's columns (`12.3s 45 `), Colab's runtime-log viewer's (`Nov 23, 2026,
// 3:45:18 AM	WARNING	`), a timestamp before a worker's address, a notebook's line number glued
// to an exception (`4859ValueError: `), and Markdown backticks around a pasted line.
#pragma once

#include <string>
#include <string_view>

namespace tpudoctor::logs {

// The line as the program printed it. Returns `line` itself when there is nothing to undo (no
// copy); otherwise a view into `buffer`.
std::string_view UnshapeLine(std::string_view line, std::string& buffer);

}  // namespace tpudoctor::logs
