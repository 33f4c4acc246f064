// Copyright nmsa contributors. SPDX-License-Identifier: Apache-2.0
//
// nmsa_board_sim: the simulated board (tb::BoardSim) on a pseudo-terminal, for trying the UART
// backend without hardware. Prints the terminal's path, then runs until its standard input
// closes:
//
//   build/nmsa_board_sim            # prints e.g. /dev/pts/3
//   build/nmsa info --backend uart:/dev/pts/3
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "nmsa/tb/board_sim.hpp"
#include "nmsa/tb/sim_context.hpp"

int main(int argc, char** argv) {
  if (argc > 1) {
    std::cerr << "usage: nmsa_board_sim\n(the seed comes from NMSA_SEED; it runs until its "
                 "standard input closes)\n";
    return 2;
  }
  try {
    const std::uint64_t seed = nmsa::tb::test_seed(1);
    nmsa::tb::BoardSim sim(seed);
    const auto& p = nmsa::tb::board_sim_params();
    std::cout << sim.tty_path() << std::endl;
    std::cerr << "nmsa_board_sim: " << p.config << " accelerator, " << p.mem_bytes / 1024
              << " KiB at 0x" << std::hex << p.mem_base << std::dec << ", seed " << seed
              << "; close stdin to stop\n";
    char c;
    while (std::cin.get(c)) {
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "nmsa_board_sim: " << e.what() << "\n";
    return 1;
  }
}
