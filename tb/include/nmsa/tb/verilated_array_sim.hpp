// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// ArraySim over one Verilated nmsa_array model. Instantiated once per configuration by the file
// that CMake generates from rtl/configs.json.
#pragma once

#include <memory>

#include "nmsa/tb/array_sim.hpp"
#include "nmsa/tb/port_bits.hpp"
#include "nmsa/tb/sim_context.hpp"

namespace nmsa::tb {

template <typename Model>
class VerilatedArraySim final : public ArraySim {
 public:
  VerilatedArraySim(ArrayGeometry geometry, std::uint64_t seed)
      : geometry_(geometry), context_(make_context(seed)),
        model_(std::make_unique<Model>(context_.get(), "nmsa_array")) {
    out_.out_psum.assign(geometry_.cols, 0);
    drive(idle_inputs());
    reset(4);
  }

  ~VerilatedArraySim() override {
    select_context();
    model_->final();
    record_coverage(*context_);
    model_.reset();
  }

  const ArrayGeometry& geometry() const override { return geometry_; }

  void reset(unsigned cycles) override {
    select_context();
    const ArrayInputs idle = idle_inputs();
    begin_reset(*model_);
    for (unsigned i = 0; i < cycles; ++i) {
      drive(idle);
      tick();
    }
    model_->rst_ni = 1;
  }
  using ArraySim::reset;

  const ArrayOutputs& step(const ArrayInputs& in) override {
    select_context();
    drive(in);
    falling_edge();
    sample();
    rising_edge();
    return out_;
  }

  std::uint64_t cycles() const override { return cycles_; }

  bool bank_busy(unsigned bank) const override { return ((model_->bank_busy_o >> bank) & 1u) != 0; }

 private:
  void drive(const ArrayInputs& in) {
    const unsigned n = static_cast<unsigned>(geometry_.pattern.n);
    const unsigned meta_w = static_cast<unsigned>(geometry_.pattern.meta_bits());
    const unsigned dw = geometry_.data_w;
    model_->wload_valid_i = in.wload_valid;
    model_->wload_row_i = in.wload_row;
    model_->wload_bank_i = in.wload_bank;
    model_->wload_dense_i = in.wload_dense;
    for (unsigned c = 0; c < geometry_.cols; ++c) {
      for (unsigned j = 0; j < n; ++j) {
        put_bits(model_->wload_val_i, (c * n + j) * dw, dw,
                 static_cast<std::uint8_t>(in.wload_val[c * n + j]));
      }
      put_bits(model_->wload_meta_i, c * meta_w, meta_w, in.wload_meta[c]);
    }
    model_->in_valid_i = in.in_valid;
    model_->in_bank_i = in.in_bank;
    for (unsigned lane = 0; lane < in.in_act.size(); ++lane) {
      put_bits(model_->in_act_i, lane * dw, dw, static_cast<std::uint8_t>(in.in_act[lane]));
    }
  }

  void sample() {
    out_.out_valid = model_->out_valid_o;
    out_.out_err = model_->out_err_o;
    out_.wload_illegal = model_->wload_illegal_o != 0;
    out_.bank_busy[0] = (model_->bank_busy_o & 1u) != 0;
    out_.bank_busy[1] = (model_->bank_busy_o & 2u) != 0;
    for (unsigned c = 0; c < geometry_.cols; ++c) {
      out_.out_psum[c] = static_cast<std::int32_t>(
          sign_extend(get_bits(model_->out_psum_o, c * geometry_.acc_w, geometry_.acc_w),
                      geometry_.acc_w));
    }
  }

  // Verilator 5.006 sends assertion failures and model teardown to the thread's current context;
  // with several simulations alive each must claim its own.
  void select_context() { Verilated::threadContextp(context_.get()); }

  void falling_edge() {
    model_->clk_i = 0;
    model_->eval();
    context_->timeInc(1);
  }

  void rising_edge() {
    model_->clk_i = 1;
    model_->eval();
    context_->timeInc(1);
    ++cycles_;
  }

  void tick() {
    falling_edge();
    rising_edge();
  }

  ArrayGeometry geometry_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Model> model_;
  ArrayOutputs out_;
  std::uint64_t cycles_ = 0;
};

}  // namespace nmsa::tb
