"""Sum the rows bench/callgraph_diff.py --out writes: python bench/callgraph_table.py <set>.tsv ..."""
import csv, glob, os, sys, collections
rows = []
for f in sys.argv[1:]:
    with open(f) as h:
        r = list(csv.reader(h, delimiter="\t"))
        rows += r[1:]
by = collections.defaultdict(list)
for r in rows:
    by[r[0]].append(r)
def n(rs, kind, pred=lambda r: True):
    return sum(1 for r in rs if r[5] == kind and pred(r))
ns = lambda r: r[7] == "1" and r[6] == "0"
np_ = lambda r: r[8] == "1" and r[6] == "0"
nc = lambda r: r[14] == "1" and r[6] == "0"
lost = lambda r: r[6] == "1" and r[8] == "0"
print("set\tmisses\tnew_strict\tnew_cfg\tnew_all\tfalse\tfalse_new_strict\tfalse_new_cfg\tfalse_new_all\thits\thits_today_not_graph")
tot = collections.Counter()
order = ["dev","ho"] + [f"h{i}" for i in range(2,16)]
for s in order:
    rs = by.get(s)
    if not rs: continue
    vals = [n(rs,"miss"), n(rs,"miss",ns), n(rs,"miss",nc), n(rs,"miss",np_), n(rs,"false"), n(rs,"false",ns), n(rs,"false",nc), n(rs,"false",np_), n(rs,"hit"), n(rs,"hit",lost)]
    for i, v in enumerate(vals): tot[i] += v
    print(s + "\t" + "\t".join(map(str, vals)))
print("all\t" + "\t".join(str(tot[i]) for i in range(10)))
print()
print("GNN001/GNN013 labels only, the per-step part (what step 2 would use): strict graph_step / cfg-mode region")
print("set\tmisses\tnew_step_strict\tnew_cfg\tfalse\tfalse_new_step_strict\tfalse_new_cfg")
t = collections.Counter()
for s in order:
    rs = [r for r in by.get(s, []) if r[4] in ("GNN001", "GNN013")]
    if not rs: continue
    st = lambda r: r[13] == "1" and r[6] == "0"
    vals = [n(rs, "miss"), n(rs, "miss", st), n(rs, "miss", nc), n(rs, "false"), n(rs, "false", st), n(rs, "false", nc)]
    for i, v in enumerate(vals): t[i] += v
    print(s + "\t" + "\t".join(map(str, vals)))
print("all\t" + "\t".join(str(t[i]) for i in range(6)))
