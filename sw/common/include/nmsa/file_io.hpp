// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Writing the files nmsa produces (model files, ONNX exports, reports, caches) so that a reader
// never sees half of one.
#pragma once

#include <string>

namespace nmsa {

// Writes `bytes` to a temporary file beside `path` (a name of its own, so that two writers of one
// path never share it) and renames it over `path`: a reader sees the old file or the new one. On
// failure the temporary is removed and std::runtime_error starts with `path` and says what failed:
// "cannot create the temporary file ...", "write to ... failed" or "cannot rename ...".
void write_file_atomically(const std::string& path, const std::string& bytes);

}  // namespace nmsa
