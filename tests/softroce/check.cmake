# One check of the softroce label, run on the host after the VM job
# (run-vm.sh) left its results in RESULTS. CMake's own JSON parser reads the
# labs' --json output and `rdmapcap summary --json`, so the checks need
# nothing but cmake.
#
#   cmake -DRESULTS=DIR -DSTEP=NAME -DKIND=lab [-DCHECKS=id,id...] -P check.cmake
#       NAME's exit status is 0, its JSON result says "ok": true, and every
#       check id in CHECKS is reported and passed.
#   cmake -DRESULTS=DIR -DSTEP=NAME -DKIND=shows "-DSHOWS=re@@re..." -P check.cmake
#       NAME exited 0 and its output matches every regular expression.
#   cmake -DRESULTS=DIR -DSTEP=NAME -DKIND=doctest -P check.cmake
#       NAME (a doctest runner) exited 0 and ran all its cases, none skipped.
#   cmake -DRESULTS=DIR -DSTEP=NAME -DKIND=fails -DMATCH=TEXT -P check.cmake
#       NAME exited with status 1 (not 0, not a timeout) and its standard
#       error contains TEXT.
#   cmake -DRESULTS=DIR -DSTEP=NAME -DKIND=capture -DRDMAPCAP=PATH
#         [-DPERFTEST=ON] [-DPROTOCOL_ERRORS=1] [-DEXPECT=key=N,key>=N...]
#         [-DDATAGRAMS=N] -P check.cmake
#       NAME exited 0 (with PERFTEST, its perftest server too), NAME.pcap
#       holds RoCE traffic, none malformed, every ICRC right, rdmapcap finds
#       protocol errors (exit status 1) exactly when PROTOCOL_ERRORS says so,
#       and the counters of the summary (summed over every channel) meet
#       EXPECT (and with DATAGRAMS, the capture holds exactly N UD packets).
#   cmake -DRESULTS=DIR -DSTEP=NAME -DKIND=compare -DLAB=PATH -DCOMPARE=PATH
#         -DWORK=DIR [-DLAB_ARGS=arg,arg...] [-DPASSIVE=ON] [-DCOMPLETIONS=OFF]
#         -P check.cmake
#       NAME (and with PASSIVE its passive side NAME-passive) exited 0; the
#       lab binary LAB runs here on the simulator with LAB_ARGS, writing its
#       capture and JSON result into WORK; softroce_compare (COMPARE) then
#       finds NAME.pcap and the simulator's capture equal, and the completions
#       of NAME.out (and NAME-passive.out) equal the simulator's. With
#       COMPLETIONS=OFF (labs whose result holds no "completions" list) the
#       packets alone are compared.
#   cmake -DRESULTS=DIR -DSTEP=NAME -DKIND=perf -DPERFTEST_STEP=P -DSIZES=n,n...
#         -DPERCENT=N [-DLATENCY=ON] -P check.cmake
#       NAME (lab 17's JSON result) against the perftest runs P-SIZE-1 and
#       P-SIZE-2 (both exited 0, and their servers too), size by size: the
#       lab's "BW average" (compared by message rate) is at least PERCENT % of
#       the better perftest run's,
#       or with LATENCY its t_typical at most PERCENT % of the better run's.
#       The spread between the two perftest runs is printed beside it.
#
# When the VM could not run here, RESULTS/skipped exists: the check prints
# "softroce: skipped" (the test's SKIP_REGULAR_EXPRESSION) and passes.
cmake_minimum_required(VERSION 3.25)

if(EXISTS "${RESULTS}/skipped")
  file(READ "${RESULTS}/skipped" why)
  message("softroce: skipped: ${why}")
  return()
endif()

set(failures "")
# expect("CONDITION" "what it means"): CONDITION is if() syntax, evaluated here.
macro(expect condition text)
  cmake_language(EVAL CODE "if(${condition})\n set(_met TRUE)\nelse()\n set(_met FALSE)\nendif()")
  if(_met)
    message("  ok    ${text}")
  else()
    message("  FAIL  ${text}")
    list(APPEND failures "${text}")
  endif()
endmacro()

# The exit status of a step, and its output on failure.
function(step_status step out_var)
  if(NOT EXISTS "${RESULTS}/${step}.status")
    message(FATAL_ERROR "softroce: ${step} did not run (no ${step}.status in ${RESULTS})")
  endif()
  file(STRINGS "${RESULTS}/${step}.status" status LIMIT_COUNT 1)
  set(${out_var} "${status}" PARENT_SCOPE)
endfunction()

function(show_output step)
  foreach(ext out err)
    if(EXISTS "${RESULTS}/${step}.${ext}")
      file(READ "${RESULTS}/${step}.${ext}" text)
      message("---- ${step}.${ext}\n${text}")
    endif()
  endforeach()
endfunction()

# The lists arrive comma-separated (a semicolon would split the argument).
string(REPLACE "," ";" CHECKS "${CHECKS}")
string(REPLACE "," ";" EXPECT "${EXPECT}")

step_status("${STEP}" status)
set(zero 0)
if(KIND STREQUAL "fails")
  set(one 1)
  expect("status EQUAL one" "${STEP} exited with status 1 (got ${status}; 124 is a timeout)")
else()
  expect("status EQUAL zero" "${STEP} exited with status 0 (got ${status})")
endif()

if(KIND STREQUAL "lab")
  file(READ "${RESULTS}/${STEP}.out" json)
  string(JSON ok ERROR_VARIABLE err GET "${json}" ok)
  if(err)
    list(APPEND failures "no JSON result")
    message("  FAIL  ${STEP} printed no JSON result: ${err}")
  else()
    expect("ok" "${STEP} reports \"ok\": true")
    string(JSON n LENGTH "${json}" checks)
    set(reported "")
    if(n GREATER 0)
      math(EXPR last "${n} - 1")
      foreach(i RANGE ${last})
        string(JSON id GET "${json}" checks ${i} id)
        string(JSON passed GET "${json}" checks ${i} ok)
        string(JSON detail GET "${json}" checks ${i} detail)
        list(APPEND reported "${id}")
        expect("passed" "check ${id} passed ${detail}")
      endforeach()
    endif()
    foreach(id IN LISTS CHECKS)
      list(FIND reported "${id}" at)
      expect("NOT at EQUAL -1" "check ${id} is reported")
    endforeach()
  endif()

elseif(KIND STREQUAL "doctest")
  file(READ "${RESULTS}/${STEP}.out" text)
  # doctest's last lines: "test cases: 8 | 8 passed | 0 failed | 0 skipped".
  if(text MATCHES "test cases: *([0-9]+) *\\| *([0-9]+) passed *\\| *([0-9]+) failed *\\| *([0-9]+) skipped")
    set(total ${CMAKE_MATCH_1})
    set(passed ${CMAKE_MATCH_2})
    set(skipped ${CMAKE_MATCH_4})
    expect("total GREATER 0 AND passed EQUAL total" "${passed} of ${total} test cases passed")
    expect("skipped EQUAL 0" "no test case skipped (${skipped})")
  else()
    list(APPEND failures "no doctest summary")
    message("  FAIL  ${STEP} printed no doctest summary (did it find the devices?)")
  endif()

elseif(KIND STREQUAL "capture")
  if(PERFTEST)
    step_status("${STEP}.server" server)
    expect("server EQUAL zero" "the perftest server exited with status 0 (got ${server})")
  endif()
  set(pcap "${RESULTS}/${STEP}.pcap")
  execute_process(COMMAND "${RDMAPCAP}" summary --json "${pcap}" OUTPUT_VARIABLE json
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  # rdmapcap exits 1 when the capture holds protocol errors (fatal NAKs,
  # exhausted retries ...), which some steps cause on purpose; 2 and 3 mean
  # it could not analyse the file at all.
  if(NOT rc MATCHES "^[01]$")
    message(FATAL_ERROR "softroce: rdmapcap summary --json ${pcap} failed (${rc}): ${err}")
  endif()
  if(NOT DEFINED PROTOCOL_ERRORS)
    set(PROTOCOL_ERRORS 0)
  endif()
  expect("rc EQUAL PROTOCOL_ERRORS" "rdmapcap exit status ${PROTOCOL_ERRORS} (got ${rc})")
  string(JSON roce GET "${json}" capture roce)
  string(JSON malformed GET "${json}" capture malformed)
  string(JSON icrc GET "${json}" capture icrc_errors)
  expect("roce GREATER 0" "the capture holds RoCE traffic (${roce} packets)")
  expect("malformed EQUAL zero" "no malformed packet (${malformed})")
  expect("icrc EQUAL zero" "every ICRC is right (${icrc} errors)")
  # UD packets belong to no channel: their count is the capture's.
  if(DEFINED DATAGRAMS)
    string(JSON datagrams GET "${json}" capture datagrams)
    expect("datagrams EQUAL DATAGRAMS" "${DATAGRAMS} UD packets (got ${datagrams})")
  endif()

  # Sum each counter over every channel of every conversation. A key is a
  # path in a channel object: naks.psn_sequence, messages.write ...
  function(channel_sum key out_var)
    string(REPLACE "." ";" path "${key}")
    set(sum 0)
    string(JSON nc LENGTH "${json}" conversations)
    if(nc GREATER 0)
      math(EXPR lc "${nc} - 1")
      foreach(c RANGE ${lc})
        string(JSON nch LENGTH "${json}" conversations ${c} channels)
        if(nch GREATER 0)
          math(EXPR lch "${nch} - 1")
          foreach(h RANGE ${lch})
            string(JSON v GET "${json}" conversations ${c} channels ${h} ${path})
            if(v STREQUAL "ON" OR v STREQUAL "TRUE")
              set(v 1)
            elseif(v STREQUAL "OFF" OR v STREQUAL "FALSE")
              set(v 0)
            endif()
            math(EXPR sum "${sum} + ${v}")
          endforeach()
        endif()
      endforeach()
    endif()
    set(${out_var} ${sum} PARENT_SCOPE)
  endfunction()

  foreach(e IN LISTS EXPECT)
    if(NOT e MATCHES "^([a-z_.]+)(>=|=)([0-9]+)$")
      message(FATAL_ERROR "softroce: bad EXPECT entry '${e}'")
    endif()
    set(key ${CMAKE_MATCH_1})
    set(op ${CMAKE_MATCH_2})
    set(want ${CMAKE_MATCH_3})
    channel_sum(${key} got)
    if(op STREQUAL "=")
      expect("got EQUAL want" "${key} = ${want} (got ${got})")
    else()
      expect("got GREATER_EQUAL want" "${key} >= ${want} (got ${got})")
    endif()
  endforeach()

elseif(KIND STREQUAL "fails")
  file(READ "${RESULTS}/${STEP}.err" text)
  string(FIND "${text}" "${MATCH}" at)
  expect("NOT at EQUAL -1" "its error says \"${MATCH}\"")

elseif(KIND STREQUAL "shows")
  # The output holds a line matching each regular expression of SHOWS
  # (separated by "@@": a regex may hold commas and semicolons).
  file(READ "${RESULTS}/${STEP}.out" text)
  string(REPLACE "@@" ";" patterns "${SHOWS}")
  foreach(re IN LISTS patterns)
    string(REGEX MATCH "${re}" found "${text}")
    expect("NOT found STREQUAL \"\"" "its output shows /${re}/")
  endforeach()

elseif(KIND STREQUAL "compare")
  set(real_json --real-json "${RESULTS}/${STEP}.out")
  if(PASSIVE)
    step_status("${STEP}-passive" passive)
    expect("passive EQUAL zero" "${STEP}-passive exited with status 0 (got ${passive})")
    list(APPEND real_json --real-json "${RESULTS}/${STEP}-passive.out")
  endif()
  # The same scenario on the simulator, in one process, on this host.
  string(REPLACE "," ";" LAB_ARGS "${LAB_ARGS}")
  file(MAKE_DIRECTORY "${WORK}")
  set(sim_pcap "${WORK}/${STEP}.sim.pcap")
  set(sim_json "${WORK}/${STEP}.sim.json")
  file(REMOVE "${sim_pcap}" "${sim_json}")
  execute_process(COMMAND "${LAB}" --backend sim --json --capture "${sim_pcap}" ${LAB_ARGS}
                  OUTPUT_FILE "${sim_json}" ERROR_VARIABLE err RESULT_VARIABLE rc)
  expect("rc EQUAL zero" "the simulator run exited with status 0 (got ${rc}) ${err}")
  if(rc EQUAL 0)
    set(json_args ${real_json} --sim-json "${sim_json}")
    if(COMPLETIONS STREQUAL "OFF")
      set(json_args "")
    endif()
    execute_process(COMMAND "${COMPARE}" "${RESULTS}/${STEP}.pcap" "${sim_pcap}" ${json_args}
                    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
    message("${out}${err}")
    # 1: the sequences differ (printed above); 2: it could not read its input.
    if(rc EQUAL 2)
      message(FATAL_ERROR "softroce: softroce_compare could not read its input: ${err}")
    endif()
    expect("rc EQUAL zero" "Soft-RoCE and the simulator agree (softroce_compare status ${rc})")
  endif()

elseif(KIND STREQUAL "perf")
  # A decimal figure ("1234.56", "0.001046", "17") as an integer count of
  # 10^-digits.
  function(fixed text digits out_var)
    if(NOT text MATCHES "^([0-9]+)(\\.([0-9]*))?")
      message(FATAL_ERROR "softroce: '${text}' is not a number")
    endif()
    set(whole ${CMAKE_MATCH_1})
    string(SUBSTRING "${CMAKE_MATCH_3}000000" 0 ${digits} frac)
    math(EXPR scale "1")
    foreach(_ RANGE 1 ${digits})
      math(EXPR scale "${scale} * 10")
    endforeach()
    # "1" before the digits keeps their leading zeros out of the arithmetic.
    math(EXPR v "${whole} * ${scale} + 1${frac} - ${scale}")
    set(${out_var} ${v} PARENT_SCOPE)
  endfunction()
  file(READ "${RESULTS}/${STEP}.out" json)
  string(REPLACE "," ";" SIZES "${SIZES}")
  # Bandwidth is compared by message rate (the same ratio for one size),
  # which perftest prints with 6 decimals, BW average with only 2.
  if(LATENCY)
    set(table lat)
    set(field t_typical)
    set(column 5)  # #bytes #iterations t_min t_max t_typical
    set(digits 2)
  else()
    set(table bw)
    set(field msg_rate_mpps)
    set(column 5)  # #bytes #iterations BW peak BW average MsgRate
    set(digits 6)
  endif()
  string(JSON rows LENGTH "${json}" ${table})
  math(EXPR last_row "${rows} - 1")
  foreach(size IN LISTS SIZES)
    set(lab "")
    foreach(i RANGE ${last_row})
      string(JSON s GET "${json}" ${table} ${i} size)
      if(s EQUAL size AND lab STREQUAL "")
        string(JSON value GET "${json}" ${table} ${i} ${field})
        fixed("${value}" ${digits} lab)
      endif()
    endforeach()
    set(runs "")
    foreach(again 1 2)
      set(p "${PERFTEST_STEP}-${size}-${again}")
      step_status("${p}" st)
      step_status("${p}.server" sst)
      expect("st EQUAL zero AND sst EQUAL zero" "${p} and its server exited with status 0")
      file(STRINGS "${RESULTS}/${p}.out" lines REGEX "^ *${size} +[0-9]+ +[0-9.]+")
      list(GET lines 0 line)
      string(REGEX REPLACE "^ +" "" line "${line}")
      string(REGEX REPLACE "[ \t]+" ";" cols "${line}")
      math(EXPR at "${column} - 1")
      list(GET cols ${at} v)
      fixed("${v}" ${digits} h)
      list(APPEND runs ${h})
    endforeach()
    list(GET runs 0 r1)
    list(GET runs 1 r2)
    if(LATENCY)
      set(best ${r1})
      if(r2 LESS r1)
        set(best ${r2})
      endif()
    else()
      set(best ${r1})
      if(r2 GREATER r1)
        set(best ${r2})
      endif()
    endif()
    math(EXPR lab_x100 "${lab} * 100")
    math(EXPR bound "${best} * ${PERCENT}")
    math(EXPR ratio "${lab} * 1000 / ${best}")
    math(EXPR spread "(${r1} - ${r2}) * 1000 / ${best}")
    message("  ${size} B: ${field}: lab ${lab}, perftest ${r1} and ${r2} (units of 10^-${digits}); "
            "lab/perftest ${ratio} per mille, perftest run 1 - run 2 ${spread} per mille")
    if(LATENCY)
      expect("lab_x100 LESS_EQUAL bound" "${size} B: t_typical at most ${PERCENT}% of perftest's")
    else()
      expect("lab_x100 GREATER_EQUAL bound"
             "${size} B: BW average (message rate) at least ${PERCENT}% of perftest's")
    endif()
  endforeach()

else()
  message(FATAL_ERROR "softroce: unknown KIND '${KIND}'")
endif()

if(failures)
  show_output("${STEP}")
  message(FATAL_ERROR "softroce: ${STEP}: failed: ${failures}")
endif()
