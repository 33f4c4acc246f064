// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The values of one run of a Runtime, by name: what the run computed so far, then its inputs,
// then the graph's initializers.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "host_kernels.hpp"
#include "nmsa/onnx_model.hpp"

namespace nmsa::graph_detail {

class Values {
 public:
  Values(const Graph& g, const std::map<std::string, Tensor>& inputs) : g_(g), inputs_(inputs) {}
  const Tensor* find(const std::string& name) const {
    if (name.empty()) return nullptr;
    if (const auto it = computed_.find(name); it != computed_.end()) return &it->second;
    if (const auto it = inputs_.find(name); it != inputs_.end()) return &it->second;
    if (const auto it = g_.initializers.find(name); it != g_.initializers.end()) return &it->second;
    return nullptr;
  }
  const Tensor& get(const Node& node, std::size_t input) const {
    const std::string& name = node.input(input);
    const Tensor* t = find(name);
    if (t == nullptr) {
      node_error(node, name.empty() ? "input " + std::to_string(input) + " is missing"
                                    : "input '" + name + "' has no value");
    }
    return *t;
  }
  const Tensor* optional(const Node& node, std::size_t input) const {
    return find(node.input(input));
  }
  void set(const std::string& name, Tensor t) {
    if (!name.empty()) computed_[name] = std::move(t);
  }

 private:
  const Graph& g_;
  const std::map<std::string, Tensor>& inputs_;
  std::unordered_map<std::string, Tensor> computed_;
};

}  // namespace nmsa::graph_detail
