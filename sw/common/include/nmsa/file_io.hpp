// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Reading the files nmsa takes, and writing the files it produces (model files, ONNX exports,
// reports, caches) so that a reader never sees half of one.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace nmsa {

// The whole content of the regular file `path`. A path that does not exist, a directory, or a
// device, FIFO or socket (which would be read until memory runs out) is a std::runtime_error
// starting with `path` and saying which, as are open and read errors.
std::string read_regular_file(const std::string& path);

// Writes `bytes` to a temporary file beside `path` (a name of its own, so that two writers of one
// path never share it) and renames it over `path`: a reader sees the old file or the new one. On
// failure the temporary is removed and std::runtime_error starts with `path` and says what failed:
// "cannot create the temporary file ...", "write to ... failed" or "cannot rename ...".
void write_file_atomically(const std::string& path, const std::string& bytes);

// std::runtime_error starting with `path` unless a file can be written there: `path` is not a
// directory, device, FIFO or socket, and its directory exists. Commands call it for each output
// before any work starts.
void require_output_path(const std::string& path);

// Several files as one output (a command's results), all or nothing: every destination is checked
// (require_output_path), every file written to its temporary, and only when all are complete are
// they renamed over their paths. A failure at any step removes every temporary and puts back
// each file already renamed over: no output is left new or changed.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files);

// write_files_atomically, after creating the directories the paths name that do not exist yet.
// When the write fails, the directories it created are removed again: a failed command leaves no
// empty output directory behind.
void write_files_creating_directories(
    const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace nmsa
