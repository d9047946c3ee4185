#!/usr/bin/env python3
"""Fit and check the confidence model of `gpukb search` (issue 21, item 5).

The confidence search prints for its first answer is a logistic function of three facts of
the ranking (kb/src/confidence.rs):
  strong   the first answer matched a signature or an error code (not words alone),
  score    its score,
  rival    the best score of another cause, over the first answer's score (0 when none).

The fit set is the corpus's held-out split as search scores it now
(tests/eval/calibration/heldout.tsv): issue 21 asks for the confidence to be calibrated
there, and no entry is ever written from it, so only these four numbers are fitted on it;
the ECE reported for them is 5-fold cross-validated (`cv`). tests/eval/calibration/fresh.tsv
keeps every new corpus file's tuning part as search scored it on arrival (first contact): the
model is checked there too (kb/tests/calibration.rs), and is over-confident on it.

  calibrate.py features FILE.jsonl... > feats.tsv     # one row per case (needs target/release/gpukb)
  calibrate.py fit feats.tsv                          # prints the coefficients
  calibrate.py ece feats.tsv A B C D                  # ECE (10 bins) of the model with those coefficients
  calibrate.py noise feats.tsv                        # is the printed confidence's ECE more than chance?
"""
import json, math, subprocess, sys

GPUKB = "target/release/gpukb"


def strong(hit):
    return any(not (m.startswith("words:") or m.startswith("names ")) for m in hit.get("matched", []))


def features(paths):
    print("id\tlabel\tright\tstrong\tscore\trival\tprinted")
    for p in paths:
        for line in open(p):
            if not line.strip():
                continue
            c = json.loads(line)
            out = subprocess.run([GPUKB, "search", "--no-detect", "--json"], input=c["error"].encode(),
                                 capture_output=True, timeout=60)
            try:
                res = json.loads(out.stdout)["results"]
            except Exception:
                res = []
            if not res:
                print(f"{c['id']}\t{c['root_cause']}\t0\t0\t0\t0\t0")
                continue
            top = res[0]
            cause = lambda h: h["id"] if h["category"] == "code" else h["category"]
            rival = max((h["score"] for h in res[1:] if cause(h) != cause(top)), default=0.0)
            right = int(top["category"] == c["root_cause"])
            print(f"{c['id']}\t{c['root_cause']}\t{right}\t{int(strong(top))}\t{top['score']}\t"
                  f"{rival / top['score'] if top['score'] > 0 else 0:.4f}\t{top['confidence']}")


def rows(path):
    out = []
    for i, l in enumerate(open(path)):
        if i == 0:
            continue
        f = l.rstrip("\n").split("\t")
        out.append((int(f[2]), int(f[3]), float(f[4]), float(f[5]), float(f[6])))
    return out


def x_of(r):
    _, st, score, rival, _ = r
    return [1.0, float(st), math.log1p(score), rival]


def predict(w, r):
    if r[2] <= 0:
        return 0.0
    z = sum(a * b for a, b in zip(w, x_of(r)))
    return 1 / (1 + math.exp(-z))


def fit(path, l2=0.5, steps=20000, lr=0.05):
    data = [r for r in rows(path) if r[2] > 0]
    w = [0.0] * 4
    n = len(data)
    for _ in range(steps):
        g = [l2 * wi / n if i else 0.0 for i, wi in enumerate(w)]
        for r in data:
            p = predict(w, r)
            for i, xi in enumerate(x_of(r)):
                g[i] += (p - r[0]) * xi / n
        w = [wi - lr * gi for wi, gi in zip(w, g)]
        # a signature or code match never lowers confidence at the same score and rival
        # (projected gradient: the 'strong' coefficient stays >= 0)
        w[1] = max(w[1], 0.0)
    return w


def ece(pairs):
    bins = [[0, 0.0, 0] for _ in range(10)]
    for conf, right in pairs:
        b = min(int(conf * 10), 9)
        bins[b][0] += 1
        bins[b][1] += conf
        bins[b][2] += right
    n = max(len(pairs), 1)
    return sum(k / n * abs(c / k - r / k) for k, c, r in bins if k)


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "features":
        features(args)
    elif cmd == "fit":
        w = fit(args[0])
        print(" ".join(f"{x:.4f}" for x in w))
        d = rows(args[0])
        print(f"fit set: n={len(d)} accuracy {sum(r[0] for r in d) / len(d):.3f}  "
              f"ECE printed {ece([(r[4], r[0]) for r in d]):.3f}  model {ece([(predict(w, r), r[0]) for r in d]):.3f}")
    elif cmd == "ece":
        w = [float(x) for x in args[1:5]]
        d = rows(args[0])
        print(f"n={len(d)} accuracy {sum(r[0] for r in d) / len(d):.3f}  ECE printed "
              f"{ece([(r[4], r[0]) for r in d]):.3f}  model {ece([(predict(w, r), r[0]) for r in d]):.3f}  "
              f"mean model conf {sum(predict(w, r) for r in d) / len(d):.3f}  "
              f"printed differs from model by > 0.015 on {sum(abs(predict(w, r) - r[4]) > 0.015 for r in d)} cases")


def cv(path, folds=5):
    """Cross-validated ECE of the model family on one fit set (to choose the family
    without looking at any held-out data)."""
    d = [r for r in rows(path)]
    preds = []
    for k in range(folds):
        train = [r for i, r in enumerate(d) if i % folds != k]
        test = [r for i, r in enumerate(d) if i % folds == k]
        tmp = "/tmp/_cv_train.tsv"
        with open(tmp, "w") as f:
            f.write("h\n")
            for r in train:
                f.write("x\tx\t%d\t%d\t%s\t%s\t%s\n" % r)
        w = fit(tmp)
        preds += [(predict(w, r), r[0]) for r in test]
    return ece(preds)


def noise(path, runs=4000, seed=21):
    """How large the ECE of the printed confidence is next to what chance alone gives.

    A perfectly calibrated model, printing the same confidences, is right on each paste with
    that probability; its ECE on a few hundred pastes is still well above 0 because each bin
    holds few pastes. This simulates it (seeded) and reports where the measured ECE falls,
    plus Spiegelhalter's z (a test of calibration that needs no bins: |z| < 1.96 means no
    evidence of miscalibration at the 5 % level) and the mean confidence next to accuracy.
    """
    import random
    d = rows(path)
    pairs = [(r[4], r[0]) for r in d]
    measured = ece(pairs)
    rng = random.Random(seed)
    sims = sorted(ece([(c, int(rng.random() < c)) for c, _ in pairs]) for _ in range(runs))
    at = sum(s < measured for s in sims) / runs
    num = sum((y - p) * (1 - 2 * p) for p, y in pairs)
    den = math.sqrt(sum((1 - 2 * p) ** 2 * p * (1 - p) for p, _ in pairs))
    z = num / den if den else 0.0
    mean_conf = sum(p for p, _ in pairs) / len(pairs)
    acc = sum(y for _, y in pairs) / len(pairs)
    se = math.sqrt(sum(p * (1 - p) for p, _ in pairs)) / len(pairs)
    print(f"n={len(pairs)}  ECE printed {measured:.3f}")
    print(f"a perfectly calibrated model with these confidences: median ECE {sims[runs // 2]:.3f}, "
          f"90th percentile {sims[int(runs * 0.9)]:.3f}, 95th {sims[int(runs * 0.95)]:.3f}; "
          f"the measured ECE is above {at:.0%} of its runs")
    print(f"Spiegelhalter z {z:+.2f}  mean confidence {mean_conf:.3f} vs accuracy {acc:.3f} "
          f"(standard error {se:.3f})")


if __name__ == "__main__":
    if sys.argv[1] == "noise":
        noise(sys.argv[2])
    elif sys.argv[1] == "cv":
        print(f"5-fold cross-validated ECE: {cv(sys.argv[2]):.3f}")
    else:
        main()
