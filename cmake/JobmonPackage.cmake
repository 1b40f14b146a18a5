# The Debian package: `cpack -G DEB` in a build dir configured with
# -DCMAKE_INSTALL_PREFIX=/usr (scripts/package.sh). CPack packages the very
# build the tests ran (no second compile), and the install() rules are the
# one list of what goes where; contrib/debian/ holds what only a .deb has
# (maintainer scripts, copyright, changelog, lintian overrides).
include(GNUInstallDirs)
set(JOBMON_DEBIAN_DIR ${PROJECT_SOURCE_DIR}/contrib/debian)

# Configuration examples as conffiles (listed in contrib/debian/conffiles).
# The plugstack line names the package's paths (/usr/bin tools, the Slurm
# plugin dir, the rules below), so these absolute destinations hold only for
# the package; a source install puts them under its prefix's etc.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(JOBMON_SLURM_ETC /etc/slurm)
else()
  set(JOBMON_SLURM_ETC ${CMAKE_INSTALL_FULL_SYSCONFDIR}/slurm)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/etc/jobmon.toml DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/jobmon)
install(FILES ${PROJECT_SOURCE_DIR}/etc/plugstack.conf.d/diag.conf
        DESTINATION ${JOBMON_SLURM_ETC}/plugstack.conf.d)
install(FILES ${PROJECT_SOURCE_DIR}/contrib/systemd/slurm_job_monitor.service
        DESTINATION /lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/contrib/prometheus/jobmon-rules.yml
              ${PROJECT_SOURCE_DIR}/contrib/grafana/jobmon-job.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/jobmon)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${JOBMON_DEBIAN_DIR}/copyright
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/jobmon)
install(FILES ${JOBMON_DEBIAN_DIR}/lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME jobmon)

# Manual pages, made by help2man from each command's own --help and
# --version (the page says what the command prints, and cannot drift from
# it). Without help2man the build goes on and the package has none (lintian
# then warns no-manual-page: package_live fails).
find_program(JOBMON_GZIP gzip REQUIRED)
find_program(JOBMON_HELP2MAN help2man)
if(JOBMON_HELP2MAN)
  set(JOBMON_MAN_PAGES "")
  foreach(page "jobmon|1|report, triage and diagnose Slurm GPU training jobs"
               "jobmon-exporter|1|per-node hardware and training metrics for a job's Prometheus"
               "jobmon-supervise|1|run a command, restart it with backoff when it exits"
               "jobmon-archive|1|pack a job's TSDB as tsdb.tar.zst and update its manifest"
               "slurm_job_monitor|8|follow Slurm training jobs and raise classified incidents")
    string(REPLACE "|" ";" page "${page}")
    list(GET page 0 command)
    list(GET page 1 section)
    list(GET page 2 summary)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/man/${command}.${section})
    add_custom_command(
      OUTPUT ${out}.gz
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/man
      COMMAND ${JOBMON_HELP2MAN} --no-info --no-discard-stderr --section=${section}
              --name=${summary} --include=${JOBMON_DEBIAN_DIR}/manpage.h2m --output=${out}
              $<TARGET_FILE:${command}>
      COMMAND ${JOBMON_GZIP} -9nf ${out}
      DEPENDS ${command} ${JOBMON_DEBIAN_DIR}/manpage.h2m VERBATIM)
    list(APPEND JOBMON_MAN_PAGES ${out}.gz)
    install(FILES ${out}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
  endforeach()
  add_custom_target(jobmon_man_pages ALL DEPENDS ${JOBMON_MAN_PAGES})
else()
  message(WARNING "help2man not found: no manual pages (apt-get install help2man)")
endif()

# changelog.Debian.gz: gzip -9n (no name or timestamp, as lintian wants).
# Its top entry must be this version.
set(JOBMON_DEBIAN_REVISION 1)
file(STRINGS ${JOBMON_DEBIAN_DIR}/changelog JOBMON_CHANGELOG_TOP LIMIT_COUNT 1)
if(NOT JOBMON_CHANGELOG_TOP MATCHES "^jobmon \\(${PROJECT_VERSION}-${JOBMON_DEBIAN_REVISION}\\) ")
  message(FATAL_ERROR "contrib/debian/changelog starts with '${JOBMON_CHANGELOG_TOP}', "
                      "expected jobmon (${PROJECT_VERSION}-${JOBMON_DEBIAN_REVISION})")
endif()
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian.gz
  COMMAND ${JOBMON_GZIP} -9n -c ${JOBMON_DEBIAN_DIR}/changelog > ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian.gz
  DEPENDS ${JOBMON_DEBIAN_DIR}/changelog VERBATIM)
add_custom_target(jobmon_debian_changelog ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian.gz)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/changelog.Debian.gz
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/jobmon)

# The Slurm the plugin was built against: a plugin runs only under that
# major.minor, so the package depends on exactly that series.
set(JOBMON_SLURM_DEPENDS "")
if(JOBMON_BUILD_SPANK)
  file(STRINGS ${SLURM_SPANK_INCLUDE_DIR}/slurm/slurm_version.h JOBMON_SLURM_VERSION_LINE
       REGEX "^#define SLURM_VERSION_NUMBER ")
  if(JOBMON_SLURM_VERSION_LINE MATCHES "0x([0-9a-fA-F][0-9a-fA-F])([0-9a-fA-F][0-9a-fA-F])[0-9a-fA-F][0-9a-fA-F]")
    math(EXPR JOBMON_SLURM_MAJOR "0x${CMAKE_MATCH_1}")
    math(EXPR JOBMON_SLURM_MINOR "0x${CMAKE_MATCH_2}")
    math(EXPR JOBMON_SLURM_NEXT "${JOBMON_SLURM_MINOR} + 1")
    set(JOBMON_SLURM_SERIES "${JOBMON_SLURM_MAJOR}.${JOBMON_SLURM_MINOR}")
    if(JOBMON_SLURM_MINOR LESS 10)
      set(JOBMON_SLURM_SERIES "${JOBMON_SLURM_MAJOR}.0${JOBMON_SLURM_MINOR}")
    endif()
    if(JOBMON_SLURM_NEXT LESS 10)
      set(JOBMON_SLURM_NEXT "0${JOBMON_SLURM_NEXT}")
    endif()
    # Debian's Slurm (headers from libslurm-dev): depend on its series. A
    # Slurm built from SchedMD's sources is no Debian package: the series is
    # said in the file name and the description instead.
    if(SLURM_SPANK_INCLUDE_DIR STREQUAL "/usr/include")
      set(JOBMON_SLURM_DEPENDS "slurm-wlm-basic-plugins (>= ${JOBMON_SLURM_SERIES}), "
          "slurm-wlm-basic-plugins (<< ${JOBMON_SLURM_MAJOR}.${JOBMON_SLURM_NEXT}), ")
      string(JOIN "" JOBMON_SLURM_DEPENDS ${JOBMON_SLURM_DEPENDS})
    endif()
  else()
    message(FATAL_ERROR "no SLURM_VERSION_NUMBER in ${SLURM_SPANK_INCLUDE_DIR}/slurm/slurm_version.h")
  endif()
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME jobmon)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR jobmon)
set(JOBMON_PACKAGE_MAINTAINER "Seed 6747f823 maintainers <maintainers@users.noreply.a-seed-6747f823.example>"
    CACHE STRING "The Debian package's Maintainer field")
set(CPACK_PACKAGE_CONTACT "${JOBMON_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "per-job observability and hang detection for Slurm GPU training jobs")
# CPack puts the summary on the first line itself.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "A SPANK plugin (sbatch --diag=on) starts a per-job Prometheus and per-node
exporters and archives the job's TSDB when it ends; slurm_job_monitor tells
a hang from a slow step and raises classified incidents with alerts; the
jobmon command reports a job's status, triages logs and runs diagnosis
playbooks against a job's metrics.")
if(JOBMON_SLURM_SERIES)
  string(APPEND CPACK_DEBIAN_PACKAGE_DESCRIPTION "
.
Built for Slurm ${JOBMON_SLURM_SERIES} (Slurm loads a SPANK plugin only under
the series it was built for): rebuild for another series before upgrading.")
endif()
set(CPACK_DEBIAN_PACKAGE_RELEASE ${JOBMON_DEBIAN_REVISION})
# The Slurm series in the file name: jobmon_0.1.0-1_slurm22.05_amd64.deb.
if(JOBMON_SLURM_SERIES)
  set(CPACK_DEBIAN_FILE_NAME
      "jobmon_${PROJECT_VERSION}-${JOBMON_DEBIAN_REVISION}_slurm${JOBMON_SLURM_SERIES}_amd64.deb")
else()
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
endif()
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# shlibdeps adds the libraries; Slurm (the plugin's host, squeue for the
# monitor) and adduser (postinst) by hand, and libcurl4: the HTTP client
# loads libcurl.so.4 at its first request (common/src/curl_library.h), so
# shlibdeps does not see it. zstd unpacks archives by hand.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${JOBMON_SLURM_DEPENDS}slurm-client, adduser, libcurl4 (>= 7.66)")
# gnuplot-nox: the incident charts ([monitor] gnuplot); without it alerts go chartless.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "prometheus, zstd, gnuplot-nox, fonts-dejavu-core")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${JOBMON_DEBIAN_DIR}/conffiles ${JOBMON_DEBIAN_DIR}/postinst
    ${JOBMON_DEBIAN_DIR}/prerm ${JOBMON_DEBIAN_DIR}/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The build tree keeps its debug info for the tests; the package is stripped.
set(CPACK_STRIP_FILES ON)
# One package of the default component; the dev cluster's fake trainer
# (component fake-trainer) stays out.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL jobmon)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(JOBMON_PACKAGE_PREFIX "${CMAKE_INSTALL_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/JobmonCPackConfig.cmake.in
               ${PROJECT_BINARY_DIR}/JobmonCPackConfig.cmake @ONLY)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/JobmonCPackConfig.cmake)
include(CPack)
