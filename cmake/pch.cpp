// The translation unit that builds the shared precompiled header
// (rdmalab_pch, see the top-level CMakeLists.txt). It has nothing of its own.
