// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// The UART bridge: framed requests from the host, byte by byte, to the accelerator's CSRs
// (an AXI4-Lite master) and to the board memory (the word port of nmsa_axi_ram), and one
// response per request. docs/fpga.md, "The protocol", is the specification; the constants are in
// nmsa_board_pkg.
//
//   request:  A5 | cmd | addr (4, LE) | len (2, LE) | payload (len bytes, writes only) | crc (2)
//   response: 5A | cmd | status | len (2, LE) | payload (len bytes, reads only) | crc (2)
//
// The CRC is CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF) over every byte after
// the sync byte, sent most significant byte first, so that the CRC over a whole frame after its
// sync byte, CRC included, is 0.
//
// A request is received completely into the payload buffer and checked (CRC, command, length,
// address range) before anything is executed, so a damaged frame has no effect. Errors and how
// the bridge gets back in step with the host:
//   - a frame cut short: when no byte has come for TimeoutClks cycles inside a frame, TIMEOUT;
//   - an unknown command, a bad length, a bad CRC or a UART framing error: the bridge drops
//     every byte until the line has been quiet for TimeoutClks cycles (the rest of the damaged
//     frame, whatever its real length), then answers BAD_CMD / BAD_LEN / BAD_CRC;
//   - an address range outside the CSRs or the memory window: BAD_ADDR at once (the frame was
//     whole);
//   - a CSR access answered SLVERR / DECERR: the access sequence completes and the status is the
//     worst response seen (a register read still returns its data, 0 for the failing ones).
// Bytes that arrive while the bridge executes or answers are dropped: the host sends one request
// and waits for its response.
`default_nettype none

module nmsa_uart_bridge #(
  parameter int unsigned MaxPayload  = 1024,          // bytes; power of two in [32, 32768]
  parameter int unsigned MemBase     = 32'h1000_0000, // the memory window (nmsa_axi_ram)
  parameter int unsigned MemBytes    = 131072,
  parameter int unsigned ClkHz       = 25_000_000,    // reported by PING only
  parameter int unsigned TimeoutClks = 500_000        // byte timeout inside a frame, >= 2
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,

  // Received bytes (nmsa_uart_rx) and bytes to send (nmsa_uart_tx).
  input  logic                       rx_valid_i,
  input  logic [7:0]                 rx_data_i,
  input  logic                       rx_err_i,
  output logic                       tx_valid_o,
  input  logic                       tx_ready_i,
  output logic [7:0]                 tx_data_o,

  // AXI4-Lite master to the CSRs.
  output logic                       csr_aw_valid_o,
  input  logic                       csr_aw_ready_i,
  output logic [11:0]                csr_aw_addr_o,
  output logic                       csr_w_valid_o,
  input  logic                       csr_w_ready_i,
  output logic [31:0]                csr_w_data_o,
  output logic [3:0]                 csr_w_strb_o,
  input  logic                       csr_b_valid_i,
  output logic                       csr_b_ready_o,
  input  logic [1:0]                 csr_b_resp_i,
  output logic                       csr_ar_valid_o,
  input  logic                       csr_ar_ready_i,
  output logic [11:0]                csr_ar_addr_o,
  input  logic                       csr_r_valid_i,
  output logic                       csr_r_ready_o,
  input  logic [31:0]                csr_r_data_i,
  input  logic [1:0]                 csr_r_resp_i,

  // Word port of the board memory (word index within the window).
  output logic                       mem_req_o,
  input  logic                       mem_gnt_i,
  output logic                       mem_we_o,
  output logic [$clog2(MemBytes)-4:0] mem_addr_o,
  output logic [63:0]                mem_wdata_o,
  output logic [7:0]                 mem_wstrb_o,
  input  logic                       mem_rvalid_i,
  input  logic [63:0]                mem_rdata_i,

  input  logic                       irq_i,   // reported by PING
  output logic                       err_o    // one cycle when an error response begins
);

  localparam int unsigned BufWords = MaxPayload / 8;
  localparam int unsigned BufAw    = $clog2(BufWords);
  localparam int unsigned MemWordW = $clog2(MemBytes) - 3;
  localparam int unsigned IdleW    = $clog2(TimeoutClks + 1);

  if (MaxPayload < 32 || MaxPayload > 32768 || (1 << $clog2(MaxPayload)) != MaxPayload)
  begin : g_bad_payload
    $error("nmsa_uart_bridge: MaxPayload must be a power of two in [32, 32768]");
  end
  // As in nmsa_axi_ram: a power-of-two window at a multiple of its size, so the word index is
  // a slice of the address. The protocol's addresses have 32 bits.
  if (MemBytes < 16 || (64'd1 << $clog2(MemBytes)) != 64'(MemBytes) || MemBase % MemBytes != 0 ||
      64'(MemBase) + 64'(MemBytes) > 64'h1_0000_0000) begin : g_bad_window
    $error("nmsa_uart_bridge: the memory window must be a power of two, aligned, below 4 GiB");
  end
  if (TimeoutClks < 2) begin : g_bad_timeout
    $error("nmsa_uart_bridge: TimeoutClks must be at least 2");
  end

  // ---------------------------------------------------------------------------------------------
  // Frame checks
  // ---------------------------------------------------------------------------------------------
  function automatic logic [15:0] crc16_step(logic [15:0] crc, logic [7:0] data);
    logic [15:0] c;
    c = crc ^ {data, 8'h00};
    for (int unsigned i = 0; i < 8; i++) begin
      c = c[15] ? ({c[14:0], 1'b0} ^ 16'h1021) : {c[14:0], 1'b0};
    end
    crc16_step = c;
  endfunction

  function automatic logic known_cmd(logic [7:0] c);
    known_cmd = c == nmsa_board_pkg::CmdPing || c == nmsa_board_pkg::CmdRegRead ||
                c == nmsa_board_pkg::CmdRegWrite || c == nmsa_board_pkg::CmdMemRead ||
                c == nmsa_board_pkg::CmdMemWrite;
  endfunction

  function automatic logic is_reg_cmd(logic [7:0] c);
    is_reg_cmd = c == nmsa_board_pkg::CmdRegRead || c == nmsa_board_pkg::CmdRegWrite;
  endfunction

  function automatic logic is_write_cmd(logic [7:0] c);
    is_write_cmd = c == nmsa_board_pkg::CmdRegWrite || c == nmsa_board_pkg::CmdMemWrite;
  endfunction

  // PING carries no payload; register commands move whole 32-bit registers, memory commands
  // whole 64-bit words, at most MaxPayload bytes.
  function automatic logic len_ok(logic [7:0] c, logic [15:0] len);
    if (c == nmsa_board_pkg::CmdPing) begin
      len_ok = len == '0;
    end else begin
      len_ok = len != '0 && 32'(len) <= MaxPayload &&
               (is_reg_cmd(c) ? len[1:0] == 2'b00 : len[2:0] == 3'b000);
    end
  endfunction

  function automatic logic addr_ok(logic [7:0] c, logic [31:0] addr, logic [15:0] len);
    logic [32:0] off;
    off = 33'(addr) - 33'(MemBase);
    if (c == nmsa_board_pkg::CmdPing) begin
      addr_ok = 1'b1;
    end else if (is_reg_cmd(c)) begin
      addr_ok = addr[31:12] == '0 && addr[1:0] == 2'b00 && 17'(addr[11:0]) + 17'(len) <= 17'd4096;
    end else begin
      addr_ok = addr[2:0] == 3'b000 && !off[32] && off + 33'(len) <= 33'(MemBytes);
    end
  endfunction

  function automatic logic [7:0] bus_status(logic [1:0] resp);
    bus_status = resp == 2'b10 ? nmsa_board_pkg::StatusBusSlvErr :
                 resp == 2'b11 ? nmsa_board_pkg::StatusBusDecErr : nmsa_board_pkg::StatusOk;
  endfunction

  function automatic logic [7:0] worse(logic [7:0] a, logic [7:0] b);
    worse = a > b ? a : b;
  endfunction

  // ---------------------------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------------------------
  typedef enum logic [4:0] {
    StSync,         // waiting for a request's sync byte
    StHeader,       // cmd, addr, len
    StPayload,
    StCrc,
    StDiscard,      // dropping bytes until the line is quiet, then the error response
    StPing,         // writing the PING answer into the buffer
    StCsrRdAddr,
    StCsrRdData,
    StCsrWrFetch,   // reading the register's value from the buffer
    StCsrWrAddr,
    StCsrWrResp,
    StMemRd,
    StMemRdWait,
    StMemWrFetch,
    StMemWr,
    StRespHead,     // sync, cmd, status, len
    StRespFetch,    // reading a payload word from the buffer
    StRespLoad,
    StRespPayload,
    StRespCrc
  } state_e;

  state_e              state_d, state_q;
  logic [7:0]          cmd_d, cmd_q, status_d, status_q;
  logic [31:0]         addr_d, addr_q;
  logic [15:0]         len_d, len_q, resp_len_d, resp_len_q;
  logic [15:0]         cnt_d, cnt_q;       // byte index within the part of the frame
  logic [15:0]         idx_d, idx_q;       // register or word index during execution
  logic [15:0]         crc_d, crc_q;
  logic [63:0]         word_d, word_q;
  logic [IdleW-1:0]    idle_d, idle_q;
  logic [11:0]         reg_addr_d, reg_addr_q;
  logic [MemWordW-1:0] mem_word_d, mem_word_q;
  logic                aw_done_d, aw_done_q, w_done_d, w_done_q;
  logic                tx_valid_d, tx_valid_q;
  logic [7:0]          tx_data_d, tx_data_q;
  logic                err_d, err_q;

  // Payload buffer: received write payloads, and read results before they are sent.
  logic                buf_wr_en, buf_rd_en;
  logic [BufAw-1:0]    buf_wr_addr, buf_rd_addr;
  logic [63:0]         buf_wr_data, buf_rd_data;

  nmsa_spad #(.Depth (BufWords), .Lanes (1), .LaneW (64), .NumRd (1)) u_buf (
    .clk_i        (clk_i),
    .wr_en_i      (buf_wr_en),
    .wr_addr_i    (buf_wr_addr),
    .wr_lane_en_i (1'b1),
    .wr_data_i    (buf_wr_data),
    .rd_en_i      (buf_rd_en),
    .rd_addr_i    (buf_rd_addr),
    .rd_data_o    (buf_rd_data)
  );

  logic        rx_byte, idle_expired, last_item, tx_free;
  logic [15:0] items_m1, len_new, crc_rx;
  logic [63:0] rx_word;

  assign rx_byte      = rx_valid_i;
  assign idle_expired = idle_q == IdleW'(TimeoutClks - 1);
  assign crc_rx       = crc16_step(crc_q, rx_data_i);
  assign len_new      = {rx_data_i, len_q[15:8]};
  assign rx_word      = {rx_data_i, word_q[63:8]};
  assign items_m1     = (is_reg_cmd(cmd_q) ? len_q >> 2 : len_q >> 3) - 16'd1;
  assign last_item    = idx_q == items_m1;
  assign tx_free      = !tx_valid_q;

  always_comb begin
    state_d    = state_q;
    cmd_d      = cmd_q;
    status_d   = status_q;
    addr_d     = addr_q;
    len_d      = len_q;
    resp_len_d = resp_len_q;
    cnt_d      = cnt_q;
    idx_d      = idx_q;
    crc_d      = crc_q;
    word_d     = word_q;
    idle_d     = rx_byte ? '0 : idle_q + 1'b1;
    reg_addr_d = reg_addr_q;
    mem_word_d = mem_word_q;
    aw_done_d  = aw_done_q;
    w_done_d   = w_done_q;
    tx_valid_d = tx_valid_q && !tx_ready_i;
    tx_data_d  = tx_data_q;
    err_d      = 1'b0;

    buf_wr_en   = 1'b0;
    buf_wr_addr = idx_q[BufAw-1:0];
    buf_wr_data = mem_rdata_i;
    buf_rd_en   = 1'b0;
    buf_rd_addr = idx_q[BufAw-1:0];

    unique case (state_q)
      // --- Receiving -----------------------------------------------------------------------
      StSync: begin
        if (rx_byte && !rx_err_i && rx_data_i == nmsa_board_pkg::ReqSync) begin
          state_d    = StHeader;
          cmd_d      = '0;
          status_d   = nmsa_board_pkg::StatusOk;
          resp_len_d = '0;  // error responses carry no payload
          cnt_d      = '0;
          crc_d      = 16'hFFFF;
        end
      end

      StHeader, StPayload, StCrc: begin
        if (rx_byte && rx_err_i) begin
          status_d = nmsa_board_pkg::StatusBadCrc;
          state_d  = StDiscard;
        end else if (rx_byte) begin
          crc_d = crc_rx;
          cnt_d = cnt_q + 1'b1;
          if (state_q == StHeader) begin
            if (cnt_q == 16'd0) begin
              cmd_d = rx_data_i;
              if (!known_cmd(rx_data_i)) begin
                status_d = nmsa_board_pkg::StatusBadCmd;
                state_d  = StDiscard;
              end
            end else if (cnt_q <= 16'd4) begin
              addr_d = {rx_data_i, addr_q[31:8]};
            end else begin
              len_d = len_new;
              if (cnt_q == 16'd6) begin
                cnt_d = '0;
                if (!len_ok(cmd_q, len_new)) begin
                  status_d = nmsa_board_pkg::StatusBadLen;
                  state_d  = StDiscard;
                end else begin
                  state_d = is_write_cmd(cmd_q) ? StPayload : StCrc;
                end
              end
            end
          end else if (state_q == StPayload) begin
            // Bytes fill 64-bit words least significant first; a final half word (a register
            // write of an odd count) lands in the low half.
            word_d = rx_word;
            if (cnt_q[2:0] == 3'd7 || cnt_q == len_q - 16'd1) begin
              buf_wr_en   = 1'b1;
              buf_wr_addr = cnt_q[BufAw+2:3];
              buf_wr_data = cnt_q[2:0] == 3'd3 ? {32'd0, rx_word[63:32]} : rx_word;
            end
            if (cnt_q == len_q - 16'd1) begin
              cnt_d   = '0;
              state_d = StCrc;
            end
          end else if (cnt_q == 16'd1) begin
            // The second CRC byte: the frame is complete.
            idx_d      = '0;
            reg_addr_d = addr_q[11:0];
            mem_word_d = addr_q[MemWordW+2:3];
            if (crc_rx != '0) begin
              status_d = nmsa_board_pkg::StatusBadCrc;
              state_d  = StDiscard;
            end else if (!addr_ok(cmd_q, addr_q, len_q)) begin
              status_d = nmsa_board_pkg::StatusBadAddr;
              state_d  = StRespHead;
            end else begin
              unique case (cmd_q)
                nmsa_board_pkg::CmdPing: begin
                  state_d    = StPing;
                  resp_len_d = 16'(nmsa_board_pkg::PingBytes);
                end
                nmsa_board_pkg::CmdRegRead: begin
                  state_d    = StCsrRdAddr;
                  resp_len_d = len_q;
                end
                nmsa_board_pkg::CmdRegWrite: state_d = StCsrWrFetch;
                nmsa_board_pkg::CmdMemRead: begin
                  state_d    = StMemRd;
                  resp_len_d = len_q;
                end
                default: state_d = StMemWrFetch;  // CmdMemWrite, the only command left
              endcase
            end
          end
        end else if (idle_expired) begin
          status_d = nmsa_board_pkg::StatusTimeout;
          state_d  = StRespHead;
        end
      end

      StDiscard: begin
        if (idle_expired && !rx_byte) state_d = StRespHead;
      end

      // --- Executing -----------------------------------------------------------------------
      StPing: begin
        buf_wr_en = 1'b1;
        unique case (idx_q[1:0])
          2'd0: buf_wr_data = {MemBase, 16'(MaxPayload), nmsa_board_pkg::ProtocolVersion};
          2'd1: buf_wr_data = {ClkHz, MemBytes};
          default: buf_wr_data = {31'd0, irq_i, TimeoutClks};
        endcase
        idx_d = idx_q + 1'b1;
        if (idx_q == 16'd2) state_d = StRespHead;
      end

      StCsrRdAddr: begin
        if (csr_ar_ready_i) state_d = StCsrRdData;
      end

      StCsrRdData: begin
        buf_wr_addr = idx_q[BufAw:1];
        buf_wr_data = idx_q[0] ? {csr_r_data_i, word_q[31:0]} : {32'd0, csr_r_data_i};
        if (csr_r_valid_i) begin
          status_d   = worse(status_q, bus_status(csr_r_resp_i));
          word_d     = {32'd0, csr_r_data_i};
          buf_wr_en  = idx_q[0] || last_item;
          idx_d      = idx_q + 1'b1;
          reg_addr_d = reg_addr_q + 12'd4;
          state_d    = last_item ? StRespHead : StCsrRdAddr;
        end
      end

      StCsrWrFetch: begin
        buf_rd_en   = 1'b1;
        buf_rd_addr = idx_q[BufAw:1];
        aw_done_d   = 1'b0;
        w_done_d    = 1'b0;
        state_d     = StCsrWrAddr;
      end

      StCsrWrAddr: begin
        aw_done_d = aw_done_q || csr_aw_ready_i;
        w_done_d  = w_done_q || csr_w_ready_i;
        if (aw_done_d && w_done_d) state_d = StCsrWrResp;
      end

      StCsrWrResp: begin
        if (csr_b_valid_i) begin
          status_d   = worse(status_q, bus_status(csr_b_resp_i));
          idx_d      = idx_q + 1'b1;
          reg_addr_d = reg_addr_q + 12'd4;
          state_d    = last_item ? StRespHead : StCsrWrFetch;
        end
      end

      StMemRd: begin
        if (mem_gnt_i) state_d = StMemRdWait;
      end

      StMemRdWait: begin
        if (mem_rvalid_i) begin
          buf_wr_en  = 1'b1;
          idx_d      = idx_q + 1'b1;
          mem_word_d = mem_word_q + 1'b1;
          state_d    = last_item ? StRespHead : StMemRd;
        end
      end

      StMemWrFetch: begin
        buf_rd_en = 1'b1;
        state_d   = StMemWr;
      end

      StMemWr: begin
        if (mem_gnt_i) begin
          idx_d      = idx_q + 1'b1;
          mem_word_d = mem_word_q + 1'b1;
          state_d    = last_item ? StRespHead : StMemWrFetch;
        end
      end

      // --- Answering -----------------------------------------------------------------------
      StRespHead: begin
        if (tx_free) begin
          tx_valid_d = 1'b1;
          cnt_d      = cnt_q + 1'b1;
          unique case (cnt_q[2:0])
            3'd0: tx_data_d = nmsa_board_pkg::RespSync;
            3'd1: tx_data_d = cmd_q;
            3'd2: tx_data_d = status_q;
            3'd3: tx_data_d = resp_len_q[7:0];
            default: tx_data_d = resp_len_q[15:8];
          endcase
          if (cnt_q != '0) crc_d = crc16_step(crc_q, tx_data_d);
          if (cnt_q == 16'd4) begin
            cnt_d   = '0;
            state_d = resp_len_q != '0 ? StRespFetch : StRespCrc;
          end
        end
      end

      StRespFetch: begin
        buf_rd_en   = 1'b1;
        buf_rd_addr = cnt_q[BufAw+2:3];
        state_d     = StRespLoad;
      end

      StRespLoad: begin
        word_d  = buf_rd_data;
        state_d = StRespPayload;
      end

      StRespPayload: begin
        if (tx_free) begin
          tx_valid_d = 1'b1;
          tx_data_d  = word_q[7:0];
          crc_d      = crc16_step(crc_q, word_q[7:0]);
          word_d     = {8'd0, word_q[63:8]};
          cnt_d      = cnt_q + 1'b1;
          if (cnt_q == resp_len_q - 16'd1) begin
            cnt_d   = '0;
            state_d = StRespCrc;
          end else if (cnt_q[2:0] == 3'd7) begin
            state_d = StRespFetch;
          end
        end
      end

      StRespCrc: begin
        if (tx_free) begin
          tx_valid_d = 1'b1;
          tx_data_d  = cnt_q[0] ? crc_q[7:0] : crc_q[15:8];
          cnt_d      = cnt_q + 1'b1;
          if (cnt_q[0]) state_d = StSync;
        end
      end

      default: state_d = StSync;
    endcase

    // Every way into the response starts its byte count and CRC afresh.
    if (state_d == StRespHead && state_q != StRespHead) begin
      cnt_d = '0;
      crc_d = 16'hFFFF;
      err_d = status_d != nmsa_board_pkg::StatusOk;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q    <= StSync;
      cmd_q      <= '0;
      status_q   <= nmsa_board_pkg::StatusOk;
      addr_q     <= '0;
      len_q      <= '0;
      resp_len_q <= '0;
      cnt_q      <= '0;
      idx_q      <= '0;
      crc_q      <= '0;
      word_q     <= '0;
      idle_q     <= '0;
      reg_addr_q <= '0;
      mem_word_q <= '0;
      aw_done_q  <= 1'b0;
      w_done_q   <= 1'b0;
      tx_valid_q <= 1'b0;
      tx_data_q  <= '0;
      err_q      <= 1'b0;
    end else begin
      state_q    <= state_d;
      cmd_q      <= cmd_d;
      status_q   <= status_d;
      addr_q     <= addr_d;
      len_q      <= len_d;
      resp_len_q <= resp_len_d;
      cnt_q      <= cnt_d;
      idx_q      <= idx_d;
      crc_q      <= crc_d;
      word_q     <= word_d;
      idle_q     <= idle_d;
      reg_addr_q <= reg_addr_d;
      mem_word_q <= mem_word_d;
      aw_done_q  <= aw_done_d;
      w_done_q   <= w_done_d;
      tx_valid_q <= tx_valid_d;
      tx_data_q  <= tx_data_d;
      err_q      <= err_d;
    end
  end

  // Bus requests depend on the state only: no path from a ready back to its valid.
  assign csr_ar_valid_o = state_q == StCsrRdAddr;
  assign csr_r_ready_o  = state_q == StCsrRdData;
  assign csr_aw_valid_o = state_q == StCsrWrAddr && !aw_done_q;
  assign csr_w_valid_o  = state_q == StCsrWrAddr && !w_done_q;
  assign csr_b_ready_o  = state_q == StCsrWrResp;
  assign mem_req_o      = state_q == StMemRd || state_q == StMemWr;
  assign mem_we_o       = state_q == StMemWr;

  assign tx_valid_o    = tx_valid_q;
  assign tx_data_o     = tx_data_q;
  assign err_o         = err_q;
  assign csr_aw_addr_o = reg_addr_q;
  assign csr_ar_addr_o = reg_addr_q;
  assign csr_w_data_o  = idx_q[0] ? buf_rd_data[63:32] : buf_rd_data[31:0];
  assign csr_w_strb_o  = 4'hF;
  assign mem_addr_o    = mem_word_q;
  assign mem_wdata_o   = buf_rd_data;
  assign mem_wstrb_o   = 8'hFF;

  // ---------------------------------------------------------------------------------------------
  // Assertions (simulation with --assert; Yosys synthesis defines SYNTHESIS).
  // ---------------------------------------------------------------------------------------------
`ifndef SYNTHESIS
  always @(posedge clk_i or negedge rst_ni) begin
    if (rst_ni) begin
      // Responses come only for the access in flight.
      if (csr_r_valid_i) begin
        assert (state_q == StCsrRdData);
      end
      if (csr_b_valid_i) begin
        assert (state_q == StCsrWrResp);
      end
      if (mem_rvalid_i) begin
        assert (state_q == StMemRdWait);
      end
      // Execution never runs past the frame's items, nor the buffer past its words.
      if (state_q == StCsrRdData || state_q == StCsrWrResp || state_q == StMemRdWait ||
          state_q == StMemWr) begin
        assert (idx_q <= items_m1);
      end
      if (buf_wr_en || buf_rd_en) begin
        assert (32'(buf_wr_addr) < BufWords && 32'(buf_rd_addr) < BufWords);
      end
    end
  end

  logic past_ok_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      past_ok_q <= 1'b0;
    end else begin
      past_ok_q <= 1'b1;
    end
  end

  always @(posedge clk_i) begin
    if (past_ok_q) begin
      // A byte offered to the transmitter stays until taken; AXI-Lite requests likewise.
      if ($past(tx_valid_o && !tx_ready_i)) begin
        assert (tx_valid_o && $stable(tx_data_o));
      end
      if ($past(csr_ar_valid_o && !csr_ar_ready_i)) begin
        assert (csr_ar_valid_o && $stable(csr_ar_addr_o));
      end
      if ($past(csr_aw_valid_o && !csr_aw_ready_i)) begin
        assert (csr_aw_valid_o && $stable(csr_aw_addr_o));
      end
      if ($past(csr_w_valid_o && !csr_w_ready_i)) begin
        assert (csr_w_valid_o && $stable(csr_w_data_o));
      end
    end
  end
`endif

endmodule

`default_nettype wire
