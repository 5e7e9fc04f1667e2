#!/bin/sh
# Serve the site's browser assets from the site itself: install the npm packages pinned in
# package-lock.json, then copy what the pages load into book/_static/vendor/ (git-ignored).
#   MathJax 3 (math)  ·  require.js + @jupyter-widgets/html-manager embed-amd.js (widget state)
# and, for the tests only, axe-core into tests/vendor/ (git-ignored): the accessibility checker the
# browser tests inject into each page. No page of the site loads it, so it is kept out of the site.
set -eu
cd "$(dirname "$0")/.."
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
dest=book/_static/vendor
rm -rf "$dest"
widgets_dest="$dest/@jupyter-widgets/html-manager/dist"   # npm's layout: require.js resolves fonts there
mkdir -p "$dest/mathjax/output" "$widgets_dest"

mathjax=node_modules/mathjax/es5
cp -R "$mathjax/tex-mml-chtml.js" "$mathjax/input" "$mathjax/ui" "$mathjax/a11y" "$mathjax/sre" "$dest/mathjax/"
cp -R "$mathjax/output/chtml" "$dest/mathjax/output/"   # the CHTML fonts tex-mml-chtml.js loads
cp node_modules/mathjax/LICENSE "$dest/mathjax/"

cp node_modules/requirejs/require.js "$dest/"
# Before require.js: resolve widget modules (and the fonts they load) in this folder, not next to the page.
echo 'var require = {baseUrl: new URL(".", document.currentScript.src).href};' > "$dest/require-config.js"

widgets=node_modules/@jupyter-widgets/html-manager/dist
cp "$widgets/embed-amd.js" "$widgets"/*.woff2 "$widgets"/*.woff "$widgets"/*.ttf "$widgets"/*.eot \
   "$widgets"/*.svg "$widgets_dest/"   # Font Awesome files referenced next to the bundle

axe=tests/vendor/axe-core
rm -rf "$axe"
mkdir -p "$axe"
cp node_modules/axe-core/axe.min.js node_modules/axe-core/LICENSE "$axe/"
printf '*\n' > tests/vendor/.gitignore   # never committed, like book/_static/vendor/

touch "$dest/.complete"
echo "vendored $(du -sh "$dest" | cut -f1) into $dest"
