// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Scratchpad SRAM: Depth entries of Lanes x LaneW bits. One write port with a per-lane enable
// (DMA beats arrive one lane at a time), NumRd synchronous read ports (data one cycle after the
// address). Written as an inferable memory so that synthesis maps it to block RAM.
`default_nettype none

module nmsa_spad #(
  parameter int unsigned Depth = 64,
  parameter int unsigned Lanes = 4,
  parameter int unsigned LaneW = 64,
  parameter int unsigned NumRd = 1
) (
  input  logic                               clk_i,

  input  logic                               wr_en_i,
  input  logic [$clog2(Depth)-1:0]           wr_addr_i,
  input  logic [Lanes-1:0]                   wr_lane_en_i,
  input  logic [Lanes*LaneW-1:0]             wr_data_i,

  input  logic [NumRd-1:0]                   rd_en_i,
  input  logic [NumRd*$clog2(Depth)-1:0]     rd_addr_i,
  output logic [NumRd*Lanes*LaneW-1:0]       rd_data_o
);

  localparam int unsigned AddrW = $clog2(Depth);
  localparam int unsigned EntryW = Lanes * LaneW;

  logic [EntryW-1:0] mem_q [Depth];

  for (genvar l = 0; l < Lanes; l++) begin : g_lane
    always_ff @(posedge clk_i) begin
      if (wr_en_i && wr_lane_en_i[l]) begin
        mem_q[wr_addr_i][l*LaneW +: LaneW] <= wr_data_i[l*LaneW +: LaneW];
      end
    end
  end

  for (genvar p = 0; p < NumRd; p++) begin : g_rd
    logic [EntryW-1:0] rd_q;
    always_ff @(posedge clk_i) begin
      if (rd_en_i[p]) begin
        rd_q <= mem_q[rd_addr_i[p*AddrW +: AddrW]];
      end
    end
    assign rd_data_o[p*EntryW +: EntryW] = rd_q;
  end

endmodule

`default_nettype wire
