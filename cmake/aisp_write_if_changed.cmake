# aisp_write_if_changed(FILE TEXT): writes FILE only when its text differs, so that a generated
# header keeps its timestamp and nothing that includes it rebuilds for nothing.
function(aisp_write_if_changed file text)
  set(old "")
  if(EXISTS "${file}")
    file(READ "${file}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${file}" "${text}")
  endif()
endfunction()
