// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/program_chain.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace nmsa {

namespace {

// Index of the first command with this opcode, or of the last one; -1 if there is none.
long find_opcode(const std::vector<Command>& cmds, Opcode op, bool last) {
  const long n = static_cast<long>(cmds.size());
  for (long i = 0; i < n; ++i) {
    const long j = last ? n - 1 - i : i;
    if (cmds[static_cast<std::size_t>(j)].opcode == op) return j;
  }
  return -1;
}

}  // namespace

std::vector<Command> chain_commands(const std::vector<const GemmProgram*>& programs) {
  if (programs.empty()) throw std::invalid_argument("chain_commands: no program to chain");
  std::vector<Command> out;
  for (std::size_t p = 0; p < programs.size(); ++p) {
    if (programs[p] == nullptr) throw std::invalid_argument("chain_commands: a null program");
    std::vector<Command> cmds = programs[p]->commands();
    const std::string which = "chain_commands: program " + std::to_string(p);
    if (p + 1 < programs.size()) {
      const long store = find_opcode(cmds, Opcode::STORE, true);
      if (store < 0) throw std::invalid_argument(which + " has no STORE to chain from");
      Command& s = cmds[static_cast<std::size_t>(store)];
      if (s.push_prev) throw std::invalid_argument(which + "'s last STORE already pushes a token");
      s.push_prev = true;
    }
    if (p > 0) {
      const long load = find_opcode(cmds, Opcode::LOAD, false);
      if (load < 0) throw std::invalid_argument(which + " has no LOAD to chain to");
      Command& l = cmds[static_cast<std::size_t>(load)];
      if (l.pop_next) throw std::invalid_argument(which + "'s first LOAD already pops a token");
      l.pop_next = true;
      // Waits for the previous program's last STORE; frees the buffers for this one's LOADs.
      Command barrier = Command::compute(0, 1, 0, 0, 0, /*dense=*/true);
      barrier.pop_next = true;
      barrier.push_prev = true;
      out.push_back(barrier);
    }
    out.insert(out.end(), cmds.begin(), cmds.end());
  }
  return out;
}

ProgramChain::ProgramChain(const DeviceCaps& caps, const MatrixI8& x,
                           std::vector<ChainLayer> layers, HostMemory& mem)
    : caps_(caps) {
  if (layers.empty()) throw std::invalid_argument("ProgramChain: no layers");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    ChainLayer& l = layers[i];
    const std::string which = "ProgramChain: layer " + std::to_string(i);
    const Eigen::Index k = i == 0 ? x.cols() : layers[i - 1].weights.rows();
    if (l.weights.cols() != k) {
      throw std::invalid_argument(which + " has K = " + std::to_string(l.weights.cols()) +
                                  " but reads " + std::to_string(k) + " values a row");
    }
    if (l.options.input) throw std::invalid_argument(which + " names its own input");
    if (i + 1 < layers.size()) {
      if (!l.options.epilogue) {
        throw std::invalid_argument(which + " has no epilogue: the next layer reads INT8");
      }
      l.options.min_output_row_stride = std::max(
          l.options.min_output_row_stride,
          GemmProgram::padded_k(caps, layers[i + 1].weights.cols()));
    }
    if (i == 0) {
      programs_.push_back(std::make_unique<GemmProgram>(caps, x, l.weights, l.options, mem));
    } else {
      const GemmProgram& prev = *programs_.back();
      l.options.input = ExternalInput{prev.output_address(), prev.output_row_stride()};
      programs_.push_back(
          std::make_unique<GemmProgram>(caps, x.rows(), l.weights, l.options, mem));
    }
  }
  std::vector<const GemmProgram*> list;
  for (const auto& p : programs_) list.push_back(p.get());
  commands_ = chain_commands(list);
  std::size_t at = 0;
  for (std::size_t i = 0; i < programs_.size(); ++i) {
    first_command_.push_back(at);
    at += programs_[i]->commands().size() + (i > 0 ? 1 : 0);  // its barrier
  }
  first_command_.push_back(at);
  cmd_addr_ = mem.alloc(commands_.size() * isa::COMMAND_BYTES, 64);
  for (std::size_t i = 0; i < commands_.size(); ++i) {
    const EncodedCommand bytes = encode(commands_[i]);
    mem.write(cmd_addr_ + i * isa::COMMAND_BYTES, bytes.data(), bytes.size());
  }
}

std::size_t ProgramChain::layer_of_command(std::size_t command) const {
  if (command >= commands_.size()) {
    throw std::out_of_range("ProgramChain: no command " + std::to_string(command) + " of " +
                            std::to_string(commands_.size()));
  }
  const auto next = std::upper_bound(first_command_.begin(), first_command_.end(), command);
  return static_cast<std::size_t>(next - first_command_.begin()) - 1;
}

std::vector<std::uint64_t> ProgramChain::layer_cycles(const CyclePrediction& prediction) const {
  std::vector<std::uint64_t> shares;
  std::uint64_t from = 0;
  std::size_t stores = 0;
  for (std::size_t i = 0; i < programs_.size(); ++i) {
    const auto& cmds = programs_[i]->commands();
    stores += static_cast<std::size_t>(std::count_if(
        cmds.begin(), cmds.end(), [](const Command& c) { return c.opcode == Opcode::STORE; }));
    const bool last = i + 1 == programs_.size();
    if (!last && (stores == 0 || stores > prediction.store_ends.size())) {
      throw std::invalid_argument("ProgramChain::layer_cycles: the prediction has " +
                                  std::to_string(prediction.store_ends.size()) +
                                  " STOREs, the chain more");
    }
    const std::uint64_t end = last ? prediction.total : prediction.store_ends[stores - 1];
    shares.push_back(end - std::min(from, end));
    from = std::max(from, end);
  }
  return shares;
}

CyclePrediction ProgramChain::predict_cycles(const PerfModelParams& params) const {
  std::vector<GemmShape> gemms;
  for (const auto& program : programs_) gemms.push_back(program->shape());
  return *predict_stream_cycles(caps_, gemms, commands_, cmd_addr_, params);
}

}  // namespace nmsa
