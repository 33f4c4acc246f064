// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Formal harness of the AXI4-Lite slave of nmsa_csr (scripts/formal_axil.sh): the real module,
// registers and counters included, under every master that obeys AXI4-Lite and every value of the
// run-control and counter inputs (reset in the first cycle only). The master's rules are
// assumptions: AWVALID, WVALID and ARVALID, once high, stay high with the same AWADDR, WDATA and
// WSTRB, ARADDR until the slave's READY.
//
// Interface rules checked in every cycle after reset (assertions):
//   - handshake: BVALID and RVALID, once high, stay high with the same BRESP, and RDATA and RRESP,
//     until BREADY / RREADY;
//   - one response per request: the harness counts the AW and W handshakes not yet answered by a
//     B handshake, and the AR handshakes not yet answered by an R handshake. BVALID only while
//     both an AW and a W are outstanding, RVALID only while an AR is: so no response before its
//     request was accepted (not even in the cycle of the handshake), none without a request, never
//     more responses than requests;
//   - bounded liveness: while a request is outstanding and the master holds READY high, its
//     response handshake comes within RespWait cycles (RespWait = 0: in the first such cycle); an
//     AR, or an AW with its W, presented while the master holds the response channel's READY high
//     is accepted within AcceptWait cycles (1: a pending response leaves first);
//   - responses are OKAY or SLVERR only (docs/integration.md, "The AXI4-Lite slave").
// With Invariants = 1 (the proof) the harness also asserts what this slave promises beyond AXI:
// AW and W are accepted together, at most one write and one read are outstanding, and a VALID is
// high exactly while its request is outstanding. These strengthen the induction; the self-test
// turns them off, so that the interface rules alone must catch every mutant.
//
// Mutant (default 0) corrupts the slave's outputs as the harness sees them (the slave itself
// runs unchanged), except mutant 8, which slows the slave down by hiding an ARVALID from it; every
// mutant must make an assertion fail (scripts/formal_axil.sh --selftest).
`default_nettype none

module nmsa_csr_axil_fv #(
  parameter int unsigned Mutant     = 0,
  parameter bit          Invariants = 1'b1
) (
  input logic        clk_i,
  input logic        rst_ni,
  // Master side.
  input logic        aw_valid_i,
  input logic [11:0] aw_addr_i,
  input logic        w_valid_i,
  input logic [31:0] w_data_i,
  input logic [3:0]  w_strb_i,
  input logic        b_ready_i,
  input logic        ar_valid_i,
  input logic [11:0] ar_addr_i,
  input logic        r_ready_i,
  // Everything else the block reads, free.
  input logic        clear_i,
  input logic        busy_i,
  input logic        done_i,
  input logic        error_i,
  input logic [3:0]  err_code_i,
  input logic [31:0] err_index_i,
  input logic        irq_done_set_i,
  input logic        irq_error_set_i,
  input logic [nmsa_reg_pkg::NMSA_NUM_COUNTERS*16-1:0] cnt_inc_i
);
  localparam int unsigned RespWait   = 0;
  localparam int unsigned AcceptWait = 1;

  logic        aw_ready, w_ready, b_valid, ar_ready, r_valid;
  logic [1:0]  b_resp, r_resp;
  logic [31:0] r_data;
  logic        start, soft_reset, irq;
  logic [63:0] cmd_base;
  logic [31:0] cmd_count;
  logic        ar_valid_dut;

  // Harness state the mutants use (defined below).
  logic b_stall_q, r_stall_q, r_hs_real_q, ar_hs_real_q, first_q;

  // Mutant 8: the slave ignores an AR in the cycle after an R handshake (accepts it a cycle late).
  assign ar_valid_dut = ar_valid_i && !(Mutant == 8 && r_hs_real_q);

  nmsa_csr #(.IncW(16)) dut (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .clear_i         (clear_i),
    .aw_valid_i      (aw_valid_i),
    .aw_ready_o      (aw_ready),
    .aw_addr_i       (aw_addr_i),
    .w_valid_i       (w_valid_i),
    .w_ready_o       (w_ready),
    .w_data_i        (w_data_i),
    .w_strb_i        (w_strb_i),
    .b_valid_o       (b_valid),
    .b_ready_i       (b_ready_i),
    .b_resp_o        (b_resp),
    .ar_valid_i      (ar_valid_dut),
    .ar_ready_o      (ar_ready),
    .ar_addr_i       (ar_addr_i),
    .r_valid_o       (r_valid),
    .r_ready_i       (r_ready_i),
    .r_data_o        (r_data),
    .r_resp_o        (r_resp),
    .start_o         (start),
    .soft_reset_o    (soft_reset),
    .cmd_base_o      (cmd_base),
    .cmd_count_o     (cmd_count),
    .busy_i          (busy_i),
    .done_i          (done_i),
    .error_i         (error_i),
    .err_code_i      (err_code_i),
    .err_index_i     (err_index_i),
    .irq_done_set_i  (irq_done_set_i),
    .irq_error_set_i (irq_error_set_i),
    .irq_o           (irq),
    .cnt_inc_i       (cnt_inc_i)
  );

  logic unused;
  assign unused = ^{start, soft_reset, irq, cmd_base, cmd_count};

  // Reset in the first cycle only.
  logic init_q = 1'b1;
  always @(posedge clk_i) init_q <= 1'b0;
  always @* assume (rst_ni == !init_q);

  // The slave's outputs as the properties see them: the slave's, or a mutant's.
  logic        aw_ready_m, w_ready_m, b_valid_m, ar_ready_m, r_valid_m;
  logic [1:0]  b_resp_m, r_resp_m;
  logic [31:0] r_data_m;

  always_comb begin
    aw_ready_m = aw_ready;
    w_ready_m  = w_ready;
    b_valid_m  = b_valid;
    b_resp_m   = b_resp;
    ar_ready_m = ar_ready;
    r_valid_m  = r_valid;
    r_resp_m   = r_resp;
    r_data_m   = r_data;
    case (Mutant)
      1: b_valid_m  = b_valid && !b_resp[1];              // drops every SLVERR write response
      2: r_valid_m  = r_valid || r_hs_real_q;             // a read response twice
      3: r_data_m   = r_data ^ {31'b0, r_stall_q};        // RDATA changes while stalled
      4: b_resp_m   = b_resp ^ {1'b0, b_stall_q};         // BRESP changes while stalled
      5: aw_ready_m = aw_ready && w_strb_i[0];            // B after a W whose AW was not taken
      6: r_valid_m  = r_valid || first_q;                 // R without any AR, after reset
      7: r_valid_m  = r_valid && !ar_hs_real_q;           // R one cycle late (lost if RREADY)
      default: ;
    endcase
  end

  // ---------------------------------------------------------------------------------------------
  // The master obeys AXI4-Lite: a VALID is held, with its payload, until READY.
  // ---------------------------------------------------------------------------------------------
  logic        aw_stall_q, w_stall_q, ar_stall_q;
  logic [11:0] aw_addr_q, ar_addr_q;
  logic [31:0] w_data_q;
  logic [3:0]  w_strb_q;

  always @(posedge clk_i) begin
    aw_stall_q <= rst_ni && aw_valid_i && !aw_ready_m;
    w_stall_q  <= rst_ni && w_valid_i && !w_ready_m;
    ar_stall_q <= rst_ni && ar_valid_i && !ar_ready_m;
    aw_addr_q  <= aw_addr_i;
    w_data_q   <= w_data_i;
    w_strb_q   <= w_strb_i;
    ar_addr_q  <= ar_addr_i;
  end

  always @* begin
    if (aw_stall_q) begin
      assume (aw_valid_i && aw_addr_i == aw_addr_q);
    end
    if (w_stall_q) begin
      assume (w_valid_i && w_data_i == w_data_q && w_strb_i == w_strb_q);
    end
    if (ar_stall_q) begin
      assume (ar_valid_i && ar_addr_i == ar_addr_q);
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Bookkeeping of the master: handshakes, outstanding requests, stalls, waits.
  // ---------------------------------------------------------------------------------------------
  logic aw_hs, w_hs, b_hs, ar_hs, r_hs;
  assign aw_hs = aw_valid_i && aw_ready_m;
  assign w_hs  = w_valid_i && w_ready_m;
  assign b_hs  = b_valid_m && b_ready_i;
  assign ar_hs = ar_valid_i && ar_ready_m;
  assign r_hs  = r_valid_m && r_ready_i;

  // Outstanding requests: accepted, not yet answered. Two bits: with the slave's outputs they
  // never exceed one (Invariants), and a mutant fails an assertion before they could wrap.
  logic [1:0]  aw_out_q, w_out_q, ar_out_q;
  logic [1:0]  b_resp_q, r_resp_q;
  logic [31:0] r_data_q;
  logic [2:0]  b_wait_q, r_wait_q, wr_accept_wait_q, rd_accept_wait_q;
  logic        wr_out, rd_out;
  assign wr_out = aw_out_q != '0 && w_out_q != '0;
  assign rd_out = ar_out_q != '0;

  function automatic logic [2:0] sat_inc(logic [2:0] x);
    sat_inc = x == 3'b111 ? x : x + 1'b1;
  endfunction

  always @(posedge clk_i) begin
    if (!rst_ni) begin
      aw_out_q         <= '0;
      w_out_q          <= '0;
      ar_out_q         <= '0;
      b_stall_q        <= 1'b0;
      r_stall_q        <= 1'b0;
      b_wait_q         <= '0;
      r_wait_q         <= '0;
      wr_accept_wait_q <= '0;
      rd_accept_wait_q <= '0;
      r_hs_real_q      <= 1'b0;
      ar_hs_real_q     <= 1'b0;
    end else begin
      aw_out_q  <= aw_out_q + 2'(aw_hs) - 2'(b_hs);
      w_out_q   <= w_out_q + 2'(w_hs) - 2'(b_hs);
      ar_out_q  <= ar_out_q + 2'(ar_hs) - 2'(r_hs);
      b_stall_q <= b_valid_m && !b_ready_i;
      r_stall_q <= r_valid_m && !r_ready_i;
      // Consecutive cycles in which the master was ready for an outstanding response that did
      // not come.
      b_wait_q  <= wr_out && b_ready_i && !b_hs ? sat_inc(b_wait_q) : '0;
      r_wait_q  <= rd_out && r_ready_i && !r_hs ? sat_inc(r_wait_q) : '0;
      // Consecutive cycles in which a complete request waited while the master was ready for
      // the response channel.
      wr_accept_wait_q <= aw_valid_i && w_valid_i && b_ready_i && !(aw_hs && w_hs) ?
                          sat_inc(wr_accept_wait_q) : '0;
      rd_accept_wait_q <= ar_valid_i && r_ready_i && !ar_hs ? sat_inc(rd_accept_wait_q) : '0;
      r_hs_real_q  <= r_valid && r_ready_i;
      ar_hs_real_q <= ar_valid_dut && ar_ready;
    end
    b_resp_q <= b_resp_m;
    r_resp_q <= r_resp_m;
    r_data_q <= r_data_m;
    first_q  <= !rst_ni;
  end

  // ---------------------------------------------------------------------------------------------
  // The slave's rules.
  // ---------------------------------------------------------------------------------------------
  always @* begin
    if (!init_q) begin
      // Handshake: a VALID stays up, its payload steady, until READY.
      if (b_stall_q) begin
        assert (b_valid_m);
        assert (b_resp_m == b_resp_q);
      end
      if (r_stall_q) begin
        assert (r_valid_m);
        assert (r_resp_m == r_resp_q);
        assert (r_data_m == r_data_q);
      end
      // One response per request: none before both AW and W (or the AR) were accepted in an
      // earlier cycle, none without a request; so never more responses than requests.
      if (b_valid_m) begin
        assert (aw_out_q != '0);
        assert (w_out_q != '0);
      end
      if (r_valid_m) begin
        assert (ar_out_q != '0);
      end
      // Bounded liveness.
      assert (b_wait_q <= 3'(RespWait));
      assert (r_wait_q <= 3'(RespWait));
      assert (wr_accept_wait_q <= 3'(AcceptWait));
      assert (rd_accept_wait_q <= 3'(AcceptWait));
      // OKAY or SLVERR only.
      if (b_valid_m) begin
        assert (b_resp_m == 2'b00 || b_resp_m == 2'b10);
      end
      if (r_valid_m) begin
        assert (r_resp_m == 2'b00 || r_resp_m == 2'b10);
      end
      // What this slave promises beyond AXI4-Lite (and what makes the induction close).
      if (Invariants) begin
        assert (aw_ready_m == w_ready_m);
        assert (aw_out_q == w_out_q);
        assert (aw_out_q <= 2'd1);
        assert (ar_out_q <= 2'd1);
        assert (b_valid_m == wr_out);
        assert (r_valid_m == rd_out);
      end
    end
  end
endmodule

`default_nettype wire
