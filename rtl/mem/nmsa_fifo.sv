// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Synchronous FIFO with valid/ready on both sides (first-word fall-through). Depth must be a
// power of two. flush_i empties it (used by soft reset).
//
// Timing: every output comes from a register. The head entry is kept in its own register
// (head_q), refilled in the cycle it is popped from the entry behind it (read from the memory at
// a registered address) or, when there is none, from in_data_i; out_valid_o and in_ready_o are
// registered flags. So a consumer's logic on the head starts at a flop instead of behind the
// memory's read multiplexer, and the FIFO behaves cycle for cycle as one whose head is read from
// the memory: an entry pushed in cycle t is visible in cycle t + 1, a pop in cycle t shows the
// next entry in cycle t + 1.
//
// BlockRam = 1 reads the memory synchronously, so that it maps to block RAM on a device without
// LUT RAM (iCE40, where the asynchronous read makes every entry a flip-flop and its multiplexer
// LUTs). The ports behave exactly as with BlockRam = 0 (scripts/formal_fifo.sh checks both): the
// entry behind the head is read one cycle ahead, at the address that entry will have once this
// cycle's pop is done; an entry written in that same cycle is not in the read yet, so a copy of
// it (bypass) stands in for the read.
`default_nettype none

module nmsa_fifo #(
  parameter int unsigned Width    = 8,
  parameter int unsigned Depth    = 4,
  parameter bit          BlockRam = 1'b0
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic             flush_i,

  input  logic             in_valid_i,
  output logic             in_ready_o,
  input  logic [Width-1:0] in_data_i,

  output logic             out_valid_o,
  input  logic             out_ready_i,
  output logic [Width-1:0] out_data_o,

  output logic [$clog2(Depth):0] count_o
);

  localparam int unsigned PtrW = $clog2(Depth);
  localparam int unsigned CntW = PtrW + 1;

  if (Depth < 2 || (1 << PtrW) != Depth) begin : g_bad_depth
    $error("nmsa_fifo: Depth must be a power of two >= 2");
  end

  // no_rw_check: with BlockRam the read of a word written in the same cycle is never used (the
  // bypass stands in for it), so Yosys need not add logic to define what the RAM returns then.
  (* no_rw_check *) logic [Width-1:0] mem_q [Depth];
  logic [Width-1:0] head_d, head_q;
  logic [PtrW-1:0]  wr_idx_q, rd_next_q;   // next write; the entry behind the head
  logic [CntW-1:0]  count_d, count_q;
  logic             valid_d, valid_q, full_d, full_q;
  logic             push, pop, several;
  logic [Width-1:0] ram_behind;   // BlockRam: the entry behind the head, from the synchronous read

  assign in_ready_o  = ~full_q;
  assign out_valid_o = valid_q;
  assign out_data_o  = head_q;
  assign count_o     = count_q;
  assign push        = in_valid_i & ~full_q;
  assign pop         = valid_q & out_ready_i;
  assign several     = count_q > CntW'(1);   // an entry is behind the head

  always_comb begin
    count_d = count_q + CntW'(push) - CntW'(pop);
    // The flags of count_d, from count_q and the two handshakes only.
    valid_d = push | several | (valid_q & ~pop);
    full_d  = (count_q == CntW'(Depth) & ~pop) |
              (count_q == CntW'(Depth - 1) & push & ~pop);
    // A free or popped head slot takes the entry behind it, else the one arriving.
    if (valid_q && !pop) begin
      head_d = head_q;
    end else if (pop && several) begin
      head_d = BlockRam ? ram_behind : mem_q[rd_next_q];
    end else begin
      head_d = in_data_i;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_idx_q  <= '0;
      rd_next_q <= PtrW'(1);
      count_q   <= '0;
      valid_q   <= 1'b0;
      full_q    <= 1'b0;
    end else if (flush_i) begin
      wr_idx_q  <= '0;
      rd_next_q <= PtrW'(1);
      count_q   <= '0;
      valid_q   <= 1'b0;
      full_q    <= 1'b0;
    end else begin
      if (push) wr_idx_q  <= wr_idx_q + PtrW'(1);
      if (pop)  rd_next_q <= rd_next_q + PtrW'(1);
      count_q <= count_d;
      valid_q <= valid_d;
      full_q  <= full_d;
    end
  end

  // The memory holds every entry, the head's too (its copy in head_q is what is read).
  always_ff @(posedge clk_i) begin
    head_q <= head_d;
    if (push) begin
      mem_q[wr_idx_q] <= in_data_i;
    end
  end

  if (BlockRam) begin : g_block_ram
    logic [PtrW-1:0]  rd_addr;       // where the entry behind the head is in the next cycle
    logic [Width-1:0] rd_data_q, bypass_data_q;
    logic             bypass_q;

    // (After a flush or a reset the read is of no use: two pushes come before an entry is
    // behind the head, and the read is made again in every cycle.)
    assign rd_addr = rd_next_q + PtrW'(pop);

    // The read sees the memory before this cycle's write (block RAM reads the old word).
    always_ff @(posedge clk_i) begin
      rd_data_q     <= mem_q[rd_addr];
      bypass_q      <= push && wr_idx_q == rd_addr;
      bypass_data_q <= in_data_i;
    end
    assign ram_behind = bypass_q ? bypass_data_q : rd_data_q;
  end else begin : g_lut_ram
    assign ram_behind = '0;
  end

`ifndef SYNTHESIS
  // The registered flags and the head copy agree with the count and the memory. No action
  // blocks (`else $error`): the formal checks read this file with Yosys 0.23, which does not
  // parse them; a failure names this file and line instead.
  always @(posedge clk_i or negedge rst_ni) begin
    if (rst_ni) begin
      assert (valid_q == (count_q != '0));
      assert (full_q == (count_q == CntW'(Depth)));
      assert (count_q <= CntW'(Depth));
      if (valid_q) begin
        assert (head_q == mem_q[rd_next_q - PtrW'(1)]);
      end
    end
  end
`endif

endmodule

`default_nettype wire
