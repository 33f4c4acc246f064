// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Run control and error capture of nmsa_top: starts a run, ends it when nothing is left in
// flight, drains a soft reset, detects a deadlocked command stream, and records the first error
// of a run (code and command index) for ERR_INFO and the interrupt. docs/errors.md describes each
// error; docs/registers.md the STATUS and ERR_INFO fields.
//
// Timing: the engines sit across the die from this block, so every error an engine reports is
// registered here first (the error stage), then selected by priority into a second register, and
// only then recorded: an error reaches ERR_INFO, the interrupt and abort (a flop: it fans out to
// every engine) three cycles after the engine raised it. A run with an error can so do a few more
// cycles of work before abort, which is harmless: nothing an engine does then is reported as a
// result, and a run with an error never ends DONE.
`default_nettype none

module nmsa_run_ctrl #(
  parameter int unsigned AlignBits = 3   // CMD_BASE must be aligned to 2**AlignBits bytes
) (
  input  logic                 clk_i,
  input  logic                 rst_ni,

  // From the CSRs.
  input  logic                 start_i,
  input  logic                 soft_reset_i,
  input  logic [AlignBits-1:0] base_low_i,      // CMD_BASE's bits below the beat alignment

  // State of the engines and queues.
  input  logic                 all_idle_i,      // nothing queued, nothing in flight (registered)
  input  logic                 stalled_i,       // commands queued, yet nothing in flight
  input  logic [2:0]           waiting_i,       // load, compute, store queue heads valid
  input  logic [3*32-1:0]      waiting_index_i, // the three heads' command indices, load lowest
  input  logic                 tok_overflow_i,

  // Errors raised by the engines.
  input  logic                 cmd_err_valid_i,
  input  logic [3:0]           cmd_err_code_i,
  input  logic [31:0]          cmd_err_index_i,
  input  logic                 cp_err_valid_i,  // illegal metadata
  input  logic [31:0]          cp_err_index_i,
  input  logic                 ld_err_valid_i,
  input  logic [1:0]           ld_err_resp_i,
  input  logic [31:0]          ld_err_index_i,
  input  logic                 st_err_valid_i,
  input  logic [1:0]           st_err_resp_i,
  input  logic [31:0]          st_err_index_i,

  // To the engines.
  output logic                 run_start_o,
  output logic                 abort_o,
  output logic                 clear_o,

  // To the CSRs.
  output logic                 busy_o,
  output logic                 done_o,
  output logic                 err_o,
  output logic [3:0]           err_code_o,
  output logic [31:0]          err_index_o,
  output logic                 irq_done_set_o,
  output logic                 irq_error_set_o
);

  function automatic logic [3:0] axi_code(logic [1:0] resp);
    axi_code = resp == 2'b11 ? nmsa_reg_pkg::NMSA_ERR_CODE_AXI_DECERR
                             : nmsa_reg_pkg::NMSA_ERR_CODE_AXI_SLVERR;
  endfunction

  logic        running_d, running_q, done_d, done_q, sr_pending_d, sr_pending_q;
  logic        err_d, err_q;
  logic [3:0]  err_code_d, err_code_q;
  logic [31:0] err_index_d, err_index_q;
  logic        start_while_busy, bad_base, start_in_reset, start_late_q;

  assign busy_o           = running_q || sr_pending_q;
  // A START while a soft reset drains is START_WHILE_BUSY too, but recorded once the reset has
  // finished: recorded at once, the reset would wipe the error and leave the driver an interrupt
  // without a cause.
  assign start_in_reset   = start_i && sr_pending_q && !soft_reset_i;
  assign start_while_busy = (start_i && busy_o && !sr_pending_q && !soft_reset_i) ||
                            (start_late_q && !sr_pending_q);
  assign bad_base         = start_i && !busy_o && base_low_i != '0;
  assign run_start_o      = start_i && !busy_o && !err_q && !bad_base;

  // ---------------------------------------------------------------------------------------------
  // Error stage: one register per engine, in priority order (command processor, compute, load,
  // store). Errors of a run count only while it runs (not while a soft reset drains it).
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned NumSources = 4;
  logic [NumSources-1:0]    src_valid, stage_valid_q;
  logic [NumSources*4-1:0]  src_code, stage_code_q;    // source s in bits [4s +: 4]
  logic [NumSources*32-1:0] src_index, stage_index_q;  // source s in bits [32s +: 32]
  logic                        stage_any;

  always_comb begin
    src_valid = {st_err_valid_i, ld_err_valid_i, cp_err_valid_i, cmd_err_valid_i};
    src_code  = {axi_code(st_err_resp_i), axi_code(ld_err_resp_i),
                 nmsa_reg_pkg::NMSA_ERR_CODE_ILLEGAL_META, cmd_err_code_i};
    src_index = {st_err_index_i, ld_err_index_i, cp_err_index_i, cmd_err_index_i};
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      stage_valid_q <= '0;
    end else begin
      stage_valid_q <= (running_q && !clear_o) ? src_valid : '0;
    end
  end

  always_ff @(posedge clk_i) begin
    stage_code_q  <= src_code;
    stage_index_q <= src_index;
  end

  assign stage_any = |stage_valid_q;

  // ---------------------------------------------------------------------------------------------
  // Deadlock: commands wait in the queues, yet nothing is in flight, so no token can ever come
  // (a stream whose tokens form a cycle, or whose fetch stalled before the balance check). A few
  // quiet cycles in a row rule out a command that is just being handed over.
  // ---------------------------------------------------------------------------------------------
  localparam int unsigned StuckW = $clog2(nmsa_pkg::DeadlockCycles + 1);
  logic              stuck_q;
  logic [StuckW-1:0] stuck_cycles_d, stuck_cycles_q;
  logic              deadlock;
  logic [32:0]       oldest_waiting;
  logic [31:0]       oldest_waiting_q;

  assign stuck_cycles_d = !stuck_q ? '0 :
                          stuck_cycles_q == StuckW'(nmsa_pkg::DeadlockCycles) ? stuck_cycles_q
                                                                              : stuck_cycles_q + 1'b1;
  assign deadlock = stuck_cycles_q == StuckW'(nmsa_pkg::DeadlockCycles);

  // The oldest command waiting in a queue names a deadlock. The queues' heads sit across the die
  // from here, so each head is registered first as a key, {not waiting, index}, that orders the
  // empty queues last; the minimum of the three keys is then found by three compares side by side
  // and registered. A deadlock is only declared after DeadlockCycles quiet cycles, during which
  // the heads cannot change, so the value, two cycles old, is the current one.
  logic [32:0] head_key_q [3];
  logic        head0_first, head1_first, head0_before1, head0_before2, head1_before2;

  always_ff @(posedge clk_i) begin
    for (int unsigned q = 0; q < 3; q++) begin
      head_key_q[q] <= {!waiting_i[q], waiting_index_i[q*32 +: 32]};
    end
  end

  assign head0_before1 = head_key_q[0] <= head_key_q[1];
  assign head0_before2 = head_key_q[0] <= head_key_q[2];
  assign head1_before2 = head_key_q[1] <= head_key_q[2];
  assign head0_first   = head0_before1 && head0_before2;
  assign head1_first   = !head0_before1 && head1_before2;

  always_comb begin
    if (head0_first)      oldest_waiting = head_key_q[0];
    else if (head1_first) oldest_waiting = head_key_q[1];
    else                  oldest_waiting = head_key_q[2];
    if (oldest_waiting[32]) oldest_waiting = '1;  // no queue waits
  end

  always_ff @(posedge clk_i) begin
    oldest_waiting_q <= oldest_waiting[31:0];
  end

  // ---------------------------------------------------------------------------------------------
  // Priority select of the staged errors and of those detected here.
  // ---------------------------------------------------------------------------------------------
  logic        new_err;
  logic [3:0]  new_err_code;
  logic [31:0] new_err_index;

  always_comb begin
    new_err       = 1'b1;
    new_err_code  = nmsa_reg_pkg::NMSA_ERR_CODE_NONE;
    new_err_index = '0;
    if (stage_any) begin
      for (int s = NumSources - 1; s >= 0; s--) begin
        if (stage_valid_q[s]) begin
          new_err_code  = stage_code_q[s*4 +: 4];
          new_err_index = stage_index_q[s*32 +: 32];
        end
      end
    end else if (running_q && deadlock) begin
      new_err_code  = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_DEPS;
      new_err_index = oldest_waiting_q;
    end else if (running_q && tok_overflow_i) begin
      new_err_code  = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_DEPS;
      new_err_index = '1;
    end else if (start_while_busy) begin
      new_err_code  = nmsa_reg_pkg::NMSA_ERR_CODE_START_WHILE_BUSY;
      new_err_index = '1;
    end else if (bad_base) begin
      new_err_code  = nmsa_reg_pkg::NMSA_ERR_CODE_BAD_ALIGN;
      new_err_index = '1;
    end else begin
      new_err = 1'b0;
    end
  end

  // abort and clear come from flops (they fan out to every engine), and the deadlock detector
  // counts a registered `stuck`. A misaligned CMD_BASE does not start the run at all.
  logic        err_new_q, abort_q, clear_q;
  logic [3:0]  err_new_code_q;
  logic [31:0] err_new_index_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      err_new_q <= 1'b0;
      start_late_q <= 1'b0;
      abort_q   <= 1'b0;
      clear_q   <= 1'b0;
      stuck_q   <= 1'b0;
    end else begin
      err_new_q <= new_err && !clear_o;
      // Held until the cycle after the reset finishes, in which start_while_busy raises it.
      start_late_q <= start_in_reset || (start_late_q && sr_pending_q);
      abort_q   <= err_d || sr_pending_d;
      clear_q   <= sr_pending_q && all_idle_i && !clear_q;
      stuck_q   <= running_q && !abort_q && stalled_i;
    end
  end

  always_ff @(posedge clk_i) begin
    err_new_code_q  <= new_err_code;
    err_new_index_q <= new_err_index;
  end

  assign abort_o = abort_q;
  assign clear_o = clear_q;

  // ---------------------------------------------------------------------------------------------
  // Run state
  // ---------------------------------------------------------------------------------------------
  always_comb begin
    running_d       = running_q;
    done_d          = done_q;
    sr_pending_d    = sr_pending_q;
    err_d           = err_q;
    err_code_d      = err_code_q;
    err_index_d     = err_index_q;
    irq_done_set_o  = 1'b0;
    irq_error_set_o = 1'b0;

    if (run_start_o) begin
      running_d = 1'b1;
      done_d    = 1'b0;
    end
    // A START refused for a misaligned CMD_BASE clears DONE too: its error must not show beside
    // the DONE of the run before it (STATUS.DONE and STATUS.ERROR are never both 1).
    if (bad_base) begin
      done_d = 1'b0;
    end
    if (err_new_q && !err_q) begin
      err_d           = 1'b1;
      err_code_d      = err_new_code_q;
      err_index_d     = err_new_index_q;
      irq_error_set_o = 1'b1;
    end
    // The run ends when nothing is left in flight and no error is on its way through the error
    // stage or the select, so that STATUS never shows a run neither busy, done nor failed; DONE
    // only if no error happened.
    if (running_q && all_idle_i && !stage_any && !err_new_q && !run_start_o) begin
      running_d = 1'b0;
      if (!err_q && !err_new_q && !new_err) begin
        done_d         = 1'b1;
        irq_done_set_o = 1'b1;
      end
    end
    if (soft_reset_i) begin
      sr_pending_d = 1'b1;
    end
    if (clear_o) begin
      sr_pending_d = 1'b0;
      running_d    = 1'b0;
      done_d       = 1'b0;
      err_d        = 1'b0;
      err_code_d   = nmsa_reg_pkg::NMSA_ERR_CODE_NONE;
      err_index_d  = '0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      running_q      <= 1'b0;
      done_q         <= 1'b0;
      stuck_cycles_q <= '0;
      sr_pending_q   <= 1'b0;
      err_q          <= 1'b0;
      err_code_q     <= '0;
      err_index_q    <= '0;
    end else begin
      running_q      <= running_d;
      done_q         <= done_d;
      stuck_cycles_q <= stuck_cycles_d;
      sr_pending_q   <= sr_pending_d;
      err_q          <= err_d;
      err_code_q     <= err_code_d;
      err_index_q    <= err_index_d;
    end
  end

  assign done_o      = done_q;
  assign err_o       = err_q;
  assign err_code_o  = err_code_q;
  assign err_index_o = err_index_q;

`ifndef SYNTHESIS
  // An engine raises an error only while it has work: the run cannot end, and report DONE, in
  // the cycle an error is raised before it reaches the error stage.
  always @(posedge clk_i or negedge rst_ni) begin
    if (rst_ni && running_q && all_idle_i) begin
      assert (!(cmd_err_valid_i || cp_err_valid_i || ld_err_valid_i || st_err_valid_i))
        else $error("nmsa_run_ctrl: an engine raised an error while every engine was idle");
    end
  end
`endif

endmodule

`default_nettype wire
