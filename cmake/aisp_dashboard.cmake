# The dashboard's files, embedded in the serve module (docs/serve.md, "How the dashboard is
# built"): web/ as it is in the tree, and uPlot's dist files from the npm registry, pinned by
# web/package-lock.json and installed with `npm ci` into the build tree (never into web/).
# Defines AISP_DASHBOARD_SOURCE, the generated C++ source to add to aisp_serve.
find_program(AISP_NPM npm)
if(NOT AISP_NPM)
  message(FATAL_ERROR "aisp serve's dashboard embeds uPlot from the npm registry, and npm is not installed: "
                      "install Node.js with npm (Debian: apt-get install npm), then configure again")
endif()

set(AISP_WEB_DIR ${PROJECT_SOURCE_DIR}/web)
set(AISP_DASHBOARD_NPM_DIR ${PROJECT_BINARY_DIR}/dashboard_npm)
set(AISP_UPLOT_DIST ${AISP_DASHBOARD_NPM_DIR}/node_modules/uplot/dist)
file(MAKE_DIRECTORY ${AISP_DASHBOARD_NPM_DIR})
# npm sets the files it unpacks to a 1985 mtime, so a stamp, not the files, tells ninja it ran.
add_custom_command(OUTPUT ${AISP_DASHBOARD_NPM_DIR}/npm_ci.stamp
                   BYPRODUCTS ${AISP_UPLOT_DIST}/uPlot.iife.min.js ${AISP_UPLOT_DIST}/uPlot.min.css
                   COMMAND ${CMAKE_COMMAND} -E copy ${AISP_WEB_DIR}/package.json ${AISP_WEB_DIR}/package-lock.json ${AISP_DASHBOARD_NPM_DIR}
                   COMMAND ${AISP_NPM} ci --no-audit --no-fund --loglevel=error
                   COMMAND ${CMAKE_COMMAND} -E touch ${AISP_DASHBOARD_NPM_DIR}/npm_ci.stamp
                   WORKING_DIRECTORY ${AISP_DASHBOARD_NPM_DIR}
                   DEPENDS ${AISP_WEB_DIR}/package.json ${AISP_WEB_DIR}/package-lock.json
                   COMMENT "npm ci: the dashboard's pinned uPlot (web/package-lock.json)")

file(GLOB_RECURSE AISP_DASHBOARD_FILES CONFIGURE_DEPENDS ${AISP_WEB_DIR}/*.html ${AISP_WEB_DIR}/*.js ${AISP_WEB_DIR}/*.css
     ${AISP_WEB_DIR}/*.svg)
list(FILTER AISP_DASHBOARD_FILES EXCLUDE REGEX "/node_modules/")
set(AISP_DASHBOARD_SOURCE ${PROJECT_BINARY_DIR}/generated/dashboard_assets_data.cpp)
add_custom_command(OUTPUT ${AISP_DASHBOARD_SOURCE}
                   COMMAND ${CMAKE_COMMAND} -DWEB_DIR=${AISP_WEB_DIR} -DOUTPUT=${AISP_DASHBOARD_SOURCE}
                           -DVENDOR_DIR=${AISP_UPLOT_DIST} -DVENDOR_NAMES=uPlot.iife.min.js,uPlot.min.css
                           -P ${PROJECT_SOURCE_DIR}/cmake/aisp_embed_dashboard.cmake
                   DEPENDS ${AISP_DASHBOARD_FILES} ${AISP_DASHBOARD_NPM_DIR}/npm_ci.stamp
                           ${PROJECT_SOURCE_DIR}/cmake/aisp_embed_dashboard.cmake
                   COMMENT "Embedding the dashboard (web/ and uPlot) in the serve module")
