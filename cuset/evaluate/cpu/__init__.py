"""CPU backend: CUDA translated to C++ and run on the project's emulator runtime (include/)."""
