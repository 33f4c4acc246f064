// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
#include "nmsa/tb/array_sim.hpp"

namespace nmsa::tb {

ArrayInputs ArraySim::idle_inputs() const {
  const ArrayGeometry& g = geometry();
  ArrayInputs in;
  in.wload_val.assign(std::size_t{g.cols} * static_cast<unsigned>(g.pattern.n), 0);
  in.wload_meta.assign(g.cols, 0);
  in.in_act.assign(std::size_t{g.rows} * g.lanes(), 0);
  return in;
}

}  // namespace nmsa::tb
