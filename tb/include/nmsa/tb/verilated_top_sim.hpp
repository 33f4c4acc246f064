// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// TopSim over one Verilated nmsa_top model. Instantiated once per configuration by the file that
// CMake generates from rtl/configs.json.
#pragma once

#include <memory>
#include <stdexcept>

#include "nmsa/tb/port_bits.hpp"
#include "nmsa/tb/sim_context.hpp"
#include "nmsa/tb/top_sim.hpp"
#include "verilated_fst_c.h"

namespace nmsa::tb {

template <typename Model>
class VerilatedTopSim final : public TopSim {
 public:
  VerilatedTopSim(unsigned axi_data_bytes, const AxiMemoryConfig& memory, std::uint64_t seed)
      : context_(make_context(seed)),
        model_(std::make_unique<Model>(context_.get(), "nmsa_top")),
        memory_(memory, seed),
        axi_monitor_(monitor_config(axi_data_bytes), "host-axi"),
        csr_monitor_("csr-axil") {
    if (memory.data_bytes != axi_data_bytes) {
      throw std::invalid_argument("host memory bus width does not match the configuration");
    }
    context_->traceEverOn(true);
    reset(4);
  }

  ~VerilatedTopSim() override {
    select_context();
    close_trace();
    model_->final();
    record_coverage(*context_);
    model_.reset();
  }

  void step() override {
    select_context();
    if (!trace_from_path_.empty() && cycles_ >= trace_from_cycle_) {
      trace_to(trace_from_path_);
      trace_from_path_.clear();
    }
    // Slave-side outputs depend on state only; present them, evaluate, then observe handshakes.
    memory_.drive(bus_);
    csr_.drive(lite_);
    axi4_to_model(bus_, *model_);
    lite_to_model();
    model_->clk_i = 0;
    model_->eval();
    dump();
    axi4_from_model(*model_, bus_);
    lite_from_model();
    memory_.commit(bus_);
    axi_monitor_.commit(bus_);
    csr_.commit(lite_);
    csr_monitor_.commit(lite_);
    model_->clk_i = 1;
    model_->eval();
    dump();
    ++cycles_;
  }

  void reset(unsigned cycles) override {
    select_context();
    // The host bus and the CSR port share the accelerator's reset (ARESETn belongs to both ends
    // of an AXI interface): what was in flight is dropped on both sides, memory contents stay.
    memory_.reset_bus();
    axi_monitor_.reset();
    csr_.reset();
    csr_monitor_.reset();
    // Inputs idle (not their random power-up values) while reset is applied.
    bus_ = Axi4Bus{};
    lite_ = AxiLiteBus{};
    axi4_to_model(bus_, *model_);
    lite_to_model();
    begin_reset(*model_);
    for (unsigned i = 0; i < cycles; ++i) {
      model_->clk_i = 0;
      model_->eval();
      model_->clk_i = 1;
      model_->eval();
    }
    model_->rst_ni = 1;
  }

  std::uint64_t cycles() const override { return cycles_; }
  bool irq() const override { return model_->irq_o != 0; }
  AxiMemory& memory() override { return memory_; }
  const Axi4Monitor& axi_monitor() const override { return axi_monitor_; }
  const AxiLiteMonitor& csr_monitor() const override { return csr_monitor_; }

  void trace_to(const std::string& path) override {
    close_trace();
    trace_ = std::make_unique<VerilatedFstC>();
    model_->trace(trace_.get(), 99);
    trace_->open(path.c_str());
    trace_path_ = path;
  }

  void close_trace() override {
    if (trace_) {
      trace_->close();
      trace_.reset();
      write_gtkw(trace_path_);
    }
  }

  void trace_from(const std::string& path, std::uint64_t cycle) override {
    trace_from_path_ = path;
    trace_from_cycle_ = cycle;
  }

 protected:
  AxiLiteMaster& csr_master() override { return csr_; }

 private:
  // Verilator 5.006 sends assertion failures and model teardown to the thread's current context;
  // with several simulations alive (a test and its traced replay) each must claim its own.
  void select_context() { Verilated::threadContextp(context_.get()); }

  static Axi4MonitorConfig monitor_config(unsigned data_bytes) {
    Axi4MonitorConfig c;
    c.data_bytes = data_bytes;
    return c;
  }

  // Half a period of a 100 MHz clock, in the 1 ps precision the models are built with.
  static constexpr std::uint64_t kHalfPeriodPs = 5000;

  void dump() {
    if (trace_) trace_->dump(context_->time());
    context_->timeInc(kHalfPeriodPs);
  }

  void lite_to_model() {
    model_->csr_aw_valid_i = lite_.aw.valid;
    model_->csr_aw_addr_i = lite_.aw.addr & 0xfffu;
    model_->csr_w_valid_i = lite_.w.valid;
    model_->csr_w_data_i = lite_.w.data;
    model_->csr_w_strb_i = lite_.w.strb;
    model_->csr_b_ready_i = lite_.b.ready;
    model_->csr_ar_valid_i = lite_.ar.valid;
    model_->csr_ar_addr_i = lite_.ar.addr & 0xfffu;
    model_->csr_r_ready_i = lite_.r.ready;
  }

  void lite_from_model() {
    lite_.aw.ready = model_->csr_aw_ready_o != 0;
    lite_.w.ready = model_->csr_w_ready_o != 0;
    lite_.b.valid = model_->csr_b_valid_o != 0;
    lite_.b.resp = static_cast<std::uint8_t>(model_->csr_b_resp_o);
    lite_.ar.ready = model_->csr_ar_ready_o != 0;
    lite_.r.valid = model_->csr_r_valid_o != 0;
    lite_.r.data = model_->csr_r_data_o;
    lite_.r.resp = static_cast<std::uint8_t>(model_->csr_r_resp_o);
  }

  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<VerilatedFstC> trace_;
  std::string trace_path_;
  std::string trace_from_path_;
  std::uint64_t trace_from_cycle_ = 0;
  AxiMemory memory_;
  Axi4Monitor axi_monitor_;
  AxiLiteMaster csr_;
  AxiLiteMonitor csr_monitor_;
  Axi4Bus bus_{};
  AxiLiteBus lite_{};
  std::uint64_t cycles_ = 0;
};

}  // namespace nmsa::tb
