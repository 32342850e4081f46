# Small helpers so that each folder's CMakeLists.txt is one call per target.

# rdmalab_add_library(NAME [PIC] SOURCES ... [DEPS ...] [CATALOG HEADER FUNCTION [HEADER FUNCTION ...]])
# A static library rdmalab_NAME with alias rdmalab::NAME and public headers in
# include/ beside the sources. PIC: position-independent code, for a library
# that a shared object links too (the Wireshark plugin links i18n, wire and
# dissect); a library says so itself, no other folder changes its properties. CATALOG registers the library's message catalog
# (the header declaring it and the function returning it) with the bilingual
# parity test, which checks every registered catalog.
function(rdmalab_add_library name)
  cmake_parse_arguments(ARG "PIC" "" "SOURCES;DEPS;CATALOG" ${ARGN})
  add_library(rdmalab_${name} STATIC ${ARG_SOURCES})
  add_library(rdmalab::${name} ALIAS rdmalab_${name})
  if(ARG_PIC)
    set_target_properties(rdmalab_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  target_include_directories(rdmalab_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
  target_link_libraries(rdmalab_${name} PUBLIC ${ARG_DEPS} PRIVATE rdmalab_warnings rdmalab_sanitizers)
  # CATALOG takes one or more (header, function) pairs.
  list(LENGTH ARG_CATALOG n)
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE 0 ${last} 2)
      math(EXPR j "${i} + 1")
      list(GET ARG_CATALOG ${i} header)
      list(GET ARG_CATALOG ${j} func)
      set_property(GLOBAL APPEND PROPERTY RDMALAB_CATALOGS "${name}|${header}|${func}")
    endforeach()
    set_property(GLOBAL APPEND PROPERTY RDMALAB_CATALOG_LIBS rdmalab::${name})
  endif()
endfunction()

# rdmalab_add_tool(NAME SOURCES ... [DEPS ...] [CATALOG HEADER FUNCTION])
# A thin executable over the libraries, installed to bin/. CATALOG registers
# the program's own messages: HEADER (relative to the tool's folder) must be
# header-only, defining FUNCTION inline, so the parity test can include it.
function(rdmalab_add_tool name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;CATALOG" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} rdmalab_warnings rdmalab_sanitizers)
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  if(ARG_CATALOG)
    list(GET ARG_CATALOG 0 header)
    list(GET ARG_CATALOG 1 func)
    set_property(GLOBAL APPEND PROPERTY RDMALAB_CATALOGS
                 "${name}|${CMAKE_CURRENT_SOURCE_DIR}/${header}|${func}")
  endif()
endfunction()

# rdmalab_add_unit_test(NAME SOURCES ... [DEPS ...] [LABELS LABEL])
# A doctest executable whose cases each appear in ctest. Tests run from the
# source tree's tests/data so fixtures are found by relative name.
function(rdmalab_add_unit_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} doctest::doctest rdmalab_test_main
                                        rdmalab_warnings rdmalab_sanitizers)
  target_compile_definitions(${name} PRIVATE
    RDMALAB_TEST_DATA="${PROJECT_SOURCE_DIR}/tests/data")
  # In an optimised build the test's own sources are compiled at -O1: the code
  # under test (the libraries, the labs) keeps -O2, and doctest's expanded
  # checks took a quarter less compile time (six test sources: 47.0 s of CPU
  # at -O2, 35.7 s at -O1).
  target_compile_options(${name} PRIVATE $<$<CONFIG:Release,RelWithDebInfo>:-O1>)
  # One label per test, its layer: "unit" unless LABELS names another (the
  # discovery script cannot carry a list of labels).
  set(label unit)
  if(ARG_LABELS)
    list(GET ARG_LABELS 0 label)
  endif()
  doctest_discover_tests(${name} TEST_PREFIX "${name}: " PROPERTIES LABELS ${label})
endfunction()

# rdmalab_add_lab(NAME NAMESPACE NS SOURCES ...)
# A lab binary (e.g. lab01-send-recv) from its folder's main.cpp and its
# header-only messages.hpp, whose catalog rdmalab::NS::catalog() is
# registered for the parity test.
function(rdmalab_add_lab name)
  cmake_parse_arguments(ARG "" "NAMESPACE" "SOURCES" ${ARGN})
  rdmalab_add_tool(${name} SOURCES ${ARG_SOURCES} DEPS rdmalab::lab
                   CATALOG messages.hpp rdmalab::${ARG_NAMESPACE}::catalog)
  rdmalab_use_pch(${name} LAB)
  # The end-to-end and docs tests run every lab registered here.
  set_property(GLOBAL APPEND PROPERTY RDMALAB_LABS ${name})
endfunction()

# rdmalab_use_pch(TARGET [LAB])
# TARGET's sources start from the precompiled CLI11, nlohmann-json and fmt
# headers (the top-level CMakeLists.txt builds them once, as rdmalab_pch):
# it saves parsing them, about a sixth of a lab's compile time. Only for
# targets whose every source uses CLI11 (the rdmalab tool, lib/cli; not
# rdmapcap, whose pipeline and report do not): the header brings CLI11's
# validator constants, whose code every file that includes it generates
# again (five seconds at -O2), so a file that does not need CLI11 is slower
# with it. LAB: the labs' one, nlohmann-json and fmt without CLI11 (the labs
# add their options through lab::CommandLine); the labs' support library
# uses it too, 11 of whose 12 sources include nlohmann-json (one to three
# seconds less per source at -O2, measured on four of them). Only targets
# compiled with the same flags as the precompiled header may use it (the
# warnings, the sanitizers and fmt's definitions). Off with -DRDMALAB_PCH=OFF.
function(rdmalab_use_pch target)
  cmake_parse_arguments(ARG "LAB" "" "" ${ARGN})
  set(pch rdmalab_pch)
  if(ARG_LAB)
    set(pch rdmalab_lab_pch)
  endif()
  if(RDMALAB_PCH AND TARGET ${pch})
    target_precompile_headers(${target} REUSE_FROM ${pch})
  endif()
endfunction()
