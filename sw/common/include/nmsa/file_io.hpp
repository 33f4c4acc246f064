// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Writing the files nmsa produces (model files, ONNX exports, reports, caches) so that a reader
// never sees half of one.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nmsa {

// Writes `bytes` to a temporary file beside `path` (a name of its own, so that two writers of one
// path never share it) and renames it over `path`: a reader sees the old file or the new one. On
// failure the temporary is removed and std::runtime_error starts with `path` and says what failed:
// "cannot create the temporary file ...", "write to ... failed" or "cannot rename ...".
void write_file_atomically(const std::string& path, const std::string& bytes);

// Several files as one output (a command's results): every file is written to its temporary
// first, and only when all are complete are they renamed over their paths. A failure before the
// renames removes every temporary and leaves no file changed.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace nmsa
