# Compiler warnings and sanitizers as INTERFACE targets, linked PRIVATE by
# every rdmalab target: the flags never leak to consumers of the libraries.

# (-Wnull-dereference is left out: with GCC 12 at -O2 it fires inside
# libstdc++'s std::string, a false positive that -Werror would turn into a
# broken build.)
add_library(rdmalab_warnings INTERFACE)
target_compile_options(rdmalab_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
  -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual
  -Wimplicit-fallthrough -Wformat=2)
if(RDMALAB_WERROR)
  target_compile_options(rdmalab_warnings INTERFACE -Werror)
endif()

add_library(rdmalab_sanitizers INTERFACE)
if(RDMALAB_SANITIZE)
  target_compile_options(rdmalab_sanitizers INTERFACE
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  # For code that behaves differently under AddressSanitizer, whichever
  # compiler built it (GCC and clang tell it each their own way).
  target_compile_definitions(rdmalab_sanitizers INTERFACE RDMALAB_ASAN=1)
  target_link_options(rdmalab_sanitizers INTERFACE -fsanitize=address,undefined)
endif()

# The sanitizer runtimes a program built without them (tshark) must preload
# to load a plugin built with them, joined with ':' into `out` (empty unless
# RDMALAB_SANITIZE): GCC's libasan and libubsan, or clang's ASan runtime,
# which carries UBSan's handlers too. Only for such a program: one built by
# clang with the sanitizers has the runtime linked in, and a second one
# preloaded would clash with it.
function(rdmalab_sanitizer_preload out)
  set(paths "")
  if(RDMALAB_SANITIZE)
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      set(names libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
    else()
      set(names libasan.so libubsan.so)
    endif()
    foreach(name IN LISTS names)
      execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${name}
                      OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE)
      list(APPEND paths ${path})
    endforeach()
  endif()
  list(JOIN paths ":" paths)
  set(${out} "${paths}" PARENT_SCOPE)
endfunction()

# Link with LLVM's lld when the compiler can (RDMALAB_LLD, on by default): it
# linked the sanitizer build's largest test in 0.73 s where GNU ld took 1.97 s,
# and a build links about a hundred programs. Off, or without lld, GNU ld links.
if(RDMALAB_LLD)
  include(CheckLinkerFlag)
  check_linker_flag(CXX -fuse-ld=lld RDMALAB_HAVE_LLD)
  if(RDMALAB_HAVE_LLD)
    add_link_options(-fuse-ld=lld)
  endif()
endif()
