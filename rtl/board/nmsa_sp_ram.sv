// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// Single-port RAM of Words x DataW bits with byte write enables: one read or one write per
// cycle. Read data arrives one cycle after the read and holds until the next read (a write leaves
// it unchanged). Written as an inferable memory with exactly these semantics, which every block
// RAM of ECP5 (DP16KD) and iCE40 (SB_RAM40_4K) has, and iCE40UP5K's single-port SPRAM too
// (yosys synth_ice40 -spram), so the same file serves both boards.
`default_nettype none

module nmsa_sp_ram #(
  parameter int unsigned Words = 1024,
  parameter int unsigned DataW = 64
) (
  input  logic                     clk_i,
  input  logic                     en_i,
  input  logic                     we_i,
  input  logic [$clog2(Words)-1:0] addr_i,
  input  logic [DataW-1:0]         wdata_i,
  input  logic [DataW/8-1:0]       wstrb_i,
  output logic [DataW-1:0]         rdata_o
);

  if (DataW % 8 != 0 || Words < 2) begin : g_bad_geometry
    $error("nmsa_sp_ram: DataW must be whole bytes and Words at least 2");
  end

  logic [DataW-1:0] mem_q [Words];
  logic [DataW-1:0] rdata_q;

  for (genvar b = 0; b < DataW / 8; b++) begin : g_byte
    always_ff @(posedge clk_i) begin
      if (en_i && we_i && wstrb_i[b]) begin
        mem_q[addr_i][b*8 +: 8] <= wdata_i[b*8 +: 8];
      end
    end
  end

  always_ff @(posedge clk_i) begin
    if (en_i && !we_i) begin
      rdata_q <= mem_q[addr_i];
    end
  end

  assign rdata_o = rdata_q;

endmodule

`default_nettype wire
