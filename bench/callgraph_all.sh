#!/bin/bash
# bench/callgraph_all.sh OUT [SETS...]: bench/callgraph_diff.py on each labelled set, then the summed table.
# Run it from a gnnlint tree; two copies may run at once (a set is taken by whoever makes OUT/lock_<set> first).
OUT=$1; shift
SETS=${@:-h15 h14 h12 h10 h13 h7 h5 h6 h11 h9 h8 h4 h2 h3 ho dev}
mkdir -p "$OUT"
for s in $SETS; do
  mkdir "$OUT/lock_$s" 2>/dev/null || continue
  case $s in dev) c=/work/corpus; l=bench/realcode/labels/dev;;
             ho) c=/work/heldout/corpus; l=bench/realcode/labels/heldout;;
             h*) n=${s#h}; c=/work/heldout$n/corpus; l=bench/realcode/labels/heldout$n;; esac
  PYTHONPATH=$PWD /work/venvs/main/bin/python bench/callgraph_diff.py --set $s --corpus $c --labels $l \
     --score /work/realcode/score_i12c_$s.txt --out "$OUT/$s.tsv" > "$OUT/$s.txt" 2> "$OUT/$s.err"
done
python3 bench/callgraph_table.py "$OUT"/*.tsv
