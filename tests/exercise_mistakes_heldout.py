"""A held-out set of student mistakes for the exercise checkers (issue 32): measure, do not tune.

Each entry is a wrong answer written as a student would write it, for one checker, with the
words a good message should contain (any of them, case-insensitive): the property the mistake
breaks. It measures how many mistakes the checkers reject and how many they *name*; which of the
figures below are honest held-out measures (the checkers not changed after seeing the entries) is
said with each. Run it with

    .venv/bin/python tests/exercise_mistakes_heldout.py

Baseline (measured before any checker was changed, 41 mistakes for 8 checkers):
    rejected 39/41 (95.1 %), named 25/41 (61.0 %) by the keyword test below
    per checker (rejected/named/total): pi 6/3/6, ntk 6/3/6, dynamic_ntk 5/5/5, yarn 5/4/5,
    llama3 5/2/5, cross_attention 5/3/5, decayed_rows 4/3/5 (the float32 decay factor passes),
    alibi_bias_from_slopes 3/2/4 (a bias that recomputes ALiBi's own slopes passes)
    (on a careful reading one more is named: "one step short" is called "your exponent is T - 1",
    which the fixed keywords miss; the keywords were not changed after seeing the messages)
Batch 2 (48 mistakes for 15 more checkers, written at about 13:41 UTC before those checkers were changed, but
after the shared machinery of comparing.py was): rejected 48/48, named 39/48 (81.3 %) by the keywords
    (recovery 2/3, parameter counts 1/4, concatenated sinusoidal 4/4, ALiBi slopes 4/4, Shaw index 4/4,
    relative shift 1/2, reversal gap 3/3, RoPE 3/4, decode positions 2/3, unrotated outputs 3/3,
    repeat_kv 3/3, padded positions 3/3, sinusoidal 3/3, slowest wavelength 3/3, extended rows 0/2);
    one entry first written for the relative shift was removed: it was Transformer-XL's own _rel_shift,
    a correct answer, which the checker rightly accepted. On a careful reading "you rotate the wrong way"
    (RoPE, clockwise) names its mistake too, which the keywords miss.
After the work of this session on the checkers (13:52 UTC), no entry or keyword changed:
    batches 1 and 2: rejected 89/89 (100 %), named 85/89 (95.5 %). Not an honest held-out figure: the
    checkers were changed with some of these entries' failures in view (see the session's report).
Batch 3 (28 mistakes, one or two for each of 27 checkers, written at about 13:53 UTC after every change
above, measured once before any further change): rejected 28/28 (100 %), named 19/28 (67.9 %). This is
the honest held-out measure of the checkers as they were at 13:53 UTC. One generic change followed, made
after seeing batch 3's misses (a constant factor or offset on every entry is named: "1/2 times the
expected one: a factor 2 missing"); with it batch 3 reads 20/28 named (71.4 %), no longer a held-out
figure.
Batch 4 (32 mistakes, one or two for each of 31 checkers, written at about 13:58 UTC after the last change to
the checkers' diagnosis, measured once): rejected 31/32 (96.9 %), named 21/32 (65.6 %). This is the honest
held-out measure of the final diagnosis. The one answer that passed (ALiBi at positions computed from the
spacing of the first two, right only for evenly spaced positions) showed that every hidden set of positions
was evenly spaced; a set that is not was added afterwards, so batch 4 now reads 32/32 rejected.

Second pass (issue 32, 16:05-16:50 UTC on 2026-11-28). First the measure was made honest: ``named`` below no longer
counts a keyword found only in an echo (the call ``fn(...)``, the generic report of the first wrong entry or of a
wrong shape, an exception's own text with the student's line of code, a checker's restatement of its rule). With
that test and no checker changed, the figures fell to: batches 1 and 2 84/89, batch 3 13/28 (46.4 %), batch 4
17/32 (53.1 %); "peaks at δ = ..., not at ..." became a symptom, not a name, so the two positional-head entries
were given the words of their mistakes ("twice", "off by one") instead. Then the diagnosis was generalised, by
the property a mistake breaks, with batches 3 and 4 in view (so their figures below are not held out): weights
read back from an output, a decay factor read per step, the law of a penalty in the distance, integer or evenly
spaced positions, which reduction a number is, the frequency ladder of any RoPE exercise, which two scores were
subtracted, the rotation a query applies, feature maps and denominators, which keys a window kept, shape errors
from PyTorch explained, the axis a count or a repeat ran along, a pair's two frequencies, whole-vector 1-D RoPE,
a band's edges and blend; and a mistake is no longer named when the answer got right a case where it would show.
Batch 5 (16 mistakes, written after that diagnosis and measured once): rejected 16/16, named 15/16 (93.8 %) by the
keywords and on a careful reading; the one miss (all positions equal to cache_len + num_new, described on a case of
one position) led to reporting the broken property of the largest failed case. Batch 6 (17 mistakes, mostly for the
checkers batch 5 did not cover, written after that and measured once): rejected 17/17, named 16/17 (94.1 %) by the
keywords but 13/17 (76.5 %) on a careful reading (the ALiBi-slopes, Shaw and llama3 hits only echoed the rule's
restatement, which the echo list now also removes); the diagnosis of those four was generalised afterwards.
Batch 7 (17 mistakes, written after every change above and measured once, the last honest measure): rejected
17/17, named 12/17 (70.6 %) by the keywords and on a careful reading; two of the twelve messages also gave a cause
the student had not necessarily made (a query rotated too, for s(2δ) - s(δ); the column index as the exponent, for a
cosine at the next pair's frequency), since removed. Over the three batches written after the property-based
diagnosis, each measured once: 40 of 50 named on a careful reading (80 %), short of the 95 % asked. The five misses
of batch 7 (a scale read back from the weights, a whole exponent of the decay, two-stage reductions of the gap, the
keys a window holds, a count run backwards) were generalised afterwards.
Batch 8 (15 mistakes, written after that and measured once): rejected 15/15, named 4/15 (26.7 %) by the keywords,
3/15 (20 %) on a careful reading (the transposed weights were only reported as a wrong shape). New slips are
still mostly outside the families the diagnosis reads: this is the honest figure for unseen mistakes, far from 95 %.
Then positions transformed (reversed, doubled, halved) for the RoPE checkers, decreasing positions, the keys kept as
sinks, more feature maps and reductions, a bias read per offset and the fitted coefficients of the expected score
were added, so batch 8 now reads 13/15, no longer held out: the next measure needs a new batch. On a careful reading
two misses of batch 1 are named ("your exponent is T - 1" for "one step short", "you rotate the wrong way" for
"clockwise"): their keywords miss the words.
Batch 9 (72 mistakes, one to three for every one of the 33 checkers, written at about 19:05 UTC by a new session from
the exercises' statements and reference functions only, before reading any checker's mistake list or message, keywords
fixed before the run; measured once): one entry, ALiBi's symmetric -m_r |j - i| for the causal bias, passed, rightly:
it equals m_r (j - i) on every visible entry, the only ones the exercise defines, so it was removed. Of the other 71:
rejected 71/71, named 58/71 (81.7 %) by the keywords; on a careful reading 60/71 (84.5 %): six keyword misses do
name the mistake ("ALiBi subtracts", "turned back by the row index", "rotated the wrong way", "the wavelength of the
fastest pairs", "read 1 column to the right", "the boundary between the parts is misplaced"), while four keyword hits
do not (T5's max_exact not halved, called a range error; dynamic NTK's inverted ratio, reported as an inf), two of
them naming a cause the student had not made: Shaw's rows off by one were called "not clipped", and a parameter
count of d² was read as "+d²: the weights on the word embedding" from a coincidence at N = 512, d = 768 (3d² - 3Nd =
d²). Then, by the property each miss breaks: a constant offset of Shaw's rows, counts read in N and d only when the
reading is unique, a cache whose length shows how many sinks it kept, real tokens treated as padding (a comparison
for the mask), a half of 2-D RoPE left unrotated, default positions read from the wrong axis (only batched inputs
without positions fail), an average where a sum is due, positions normalised, and the norm message's cos² + sin²;
batch 9 then reads 65/71 named by the keywords (the six remaining misses are the six named on a careful reading), no
longer held out.
Batch 10 (15 mistakes for 15 checkers, written at about 19:10 UTC after that generalisation, without running any entry;
measured once): two entries were not mistakes and were removed (angles that posenc.apply_rope
forms in float64 whatever the dtype of the positions; rounded positions returned as floats, which the exercise accepts
as exact values). Of the other 13: rejected 12/13; the one that passed (ALiBi at positions that are sorted first) showed
that every hidden set of positions was increasing, and a set in no particular order was added afterwards, so batch 10
now reads 13/13 rejected. Named 7/13 by the keywords (a keyword that matched any message, "L", was left out) and
8/13 (61.5 %) on a careful reading (the reciprocal slopes are named, "you divided the offsets by the slopes", which
the keywords miss; llama3's frequencies multiplied by s are described only by the property they break, "not between
θ_ℓ / s and θ_ℓ"). Not named: queries taken from z in cross-attention, linspace positions, a plus in the asymmetry's
cross term, key-value heads expanded along L. Over batches 9 and 10, the honest figure for unseen mistakes is 68 of 84
named on a careful reading (81 %), short of the 95 % asked.
Then, from batch 10's misses: a probe of the student's function (each argument changed alone: an argument that moves
the expected answer but never the student's, on any hidden input, is "not used"), positions that do not step by 1,
an asymmetry's sine coefficients fitted and read in the pair's coordinates, key-value heads spread along another axis
and reshaped, a wrong number of output rows read against y and z, positions sorted or reversed; batch 10 then reads
12/13 named by the keywords, no longer held out.
Batch 11 (34 mistakes, one or two for each of the 33 checkers, written at about 19:15 UTC after that generalisation,
keywords fixed before the run; measured once): rejected 34/34, named 28/34 (82.4 %) by the keywords, 26/34 (76.5 %) on
a careful reading, and two of the messages named a cause the student had not made: the argument probe, then run on
one case only, said "does not use y" for keys taken from y, true of a case with a single query row only; and a
2ℓ/(d - 2) ladder was called "d/2 as the dimension" on the case d = 4, where the two ladders coincide. (One keyword,
"z", matched the word "sizes"; it was replaced by longer ones after the run.) Then: the probe requires an argument
unused on every hidden case, no ladder slip is named for d = 4, two more ladders (2ℓ/(d - 2), as linspace gives, and
no frequencies at all), per-head scale factors of a bias (m_r², the head number), a cache with the window ahead of
the sinks, a transposed relative shift, counts read with coefficients up to 4 (and a first hidden case, N = 1024,
d = 96, where no two readings coincide), and the sizes of a shape error named as axes of the arguments ("6 is
y.shape[0]; 2 is z.shape[0]"); batch 11 then reads 34/34 named by the keywords, no longer held out.
Batch 12 (34 mistakes, one or two for each of 30 checkers, written at about 19:20 UTC after that generalisation,
keywords fixed before the run; measured once): rejected 34/34, named 25/34 (73.5 %) by the keywords, 22/34 (64.7 %) on
a careful reading: three keyword hits only echo (ALiBi's bias divided by the length, "divided by its head's slope"; a
decay of 1 - (lr + wd) per step, shown as "1 - 0.8 per step" without saying lr + wd; Shaw's |j - i|, called "a sign or
an axis is reversed"), and one of them named a cause the student had not made ("you use i - j", true only of a case
where every key precedes the query). Then: PyTorch's errors for bmm on other than 3-D inputs, for an axis counted from
the start, and for a negative step explained; a bias not 0 on the diagonal; an answer that is minus a typical slip;
one score s(δ) alone; a 2π in the angles; slopes whose step does not shrink with the number of heads; 2-D RoPE applied
twice to the whole vector; 1/(o - 1); a per-step decay read as lr + wd (or another product) when that reading is the
only one; a bias divided by the length; Shaw's rows from |j - i| when the offsets have both signs. Batch 12 then reads
34/34 named by the keywords, no longer held out.
Batch 13 (35 entries, one or two for each of 33 checkers, written at about 19:26 UTC after that generalisation,
keywords fixed before the run; measured once): one entry, T5's exact range with <= max_exact, passed, rightly: at n =
max_exact the logarithmic formula gives max_exact too, so it is a correct answer, and it was removed. Of the other 34:
rejected 34/34, named 20/34 (58.8 %) by the keywords, 18/34 (52.9 %) on a careful reading: a square mask transposed
got the advice to fill with -inf rather than 0 (a keyword hit on "mask", not a name), and a window that counts the
sinks (window - sinks keys kept) was called "the window alone", a cause the student had not made. The argument probe
did not reach the five frequency checkers nor the ten older ones, which do not run through _compare_cases: YaRN's
betas and llama3's two factors fixed in the code were not named. Then: the argument probe for the frequency rules; two
arguments of the same kind swapped (the reference with them exchanged gives the answer); every axis one too long or
too short (a range that includes its end); the shape hint for the older checkers too; RoPE not the identity at
position 0; 2-D RoPE at positions made integers; an index equal to a size explained; the number of times each
key-value head is repeated; slopes right to three digits (half precision); a feature map on one side only; an average
over pairs in the asymmetry; a positional query that is no rotation of the key; a cache length said in counts only.
Batch 13 then reads 34/34 named by the keywords, no longer held out.
Batch 14 (37 mistakes, one or two for each of 33 checkers, written at about 19:31 UTC after that generalisation,
keywords fixed before the run; measured once): rejected 37/37, named 21/37 (56.8 %) by the keywords, 16/37 (43.2 %) on
a careful reading: two decay factors were shown as a number per step without their reading (lr / wd, (1 - wd)^(lr T)),
an NTK ladder counted from 1 was shown as "0.9153 · B^(-2ℓ/d)" (the keyword "ℓ" matched anything), a transposed angle
table got only PyTorch's broadcast explained, and Shaw's offsets clipped to [-2c, 2c] were called "you add c before
clipping" on a case where the two coincide, a cause the student had not made. Then: Shaw's causes are named only when
they reproduce every case with wrong rows (a case where a cause cannot show is no evidence either way), as
_compare_cases does; the decay read as (1 - a)^(b T) and with lr / wd; PyTorch's view error explained; a reversed
ladder; outputs turned back by positions ± 1 or in one half only; values rotated in linear attention; a window shifted
by another amount; rows that are whole copies of the table; a half of 2-D RoPE with another base; sines in the odd
columns; positions divided by seq_len; a wrong default padding_idx; the asymmetry's ladder slips; a hint when only
inputs with leading axes fail (k.T, dim=1). Batch 14 then reads 35/37 named by the keywords, no longer held out.
Batch 15 (34 entries, one or two for each of 32 checkers, written at about 19:37 UTC after that generalisation,
keywords fixed before the run; measured once): three entries passed, rightly, and were removed: a streaming cache
returned in float64 (the exercise fixes the values, not the dtype), a positional query whose angles were rounded to
float16 (its score still peaks at the target, the property asked), and Shaw's rows built with an "xy" meshgrid
(correct: that meshgrid's axes are the other way round). Of the other 31: rejected 31/31, named 21/31 (67.7 %) by the
keywords, 18/31 (58.1 %) on a careful reading; one message named a cause the student had not made: a scale of isqrt(8)
= 2 was read as sqrt(Lq) = sqrt(4) on the case where the two coincide. Then: isqrt(d) among the scalings; the decay
read as (1 - lr wd T)^T and as the factors (1 - lr)(1 - wd); an answer right to three significant digits only;
expected scores at δ ± 1; an asymmetry divided by |q| |k|; a count that runs on across the rows of a batch; 2-D blocks
indexed from 1. Batch 15 then reads 26/31 named by the keywords (29/31 on a careful reading), no longer held out.
Batch 16 (34 mistakes, one or two for each of 32 checkers, written at about 19:42 UTC after that generalisation,
keywords fixed before the run; measured once): rejected 34/34, named 23/34 (67.6 %) by the keywords, 20/34 (58.8 %) on
a careful reading (T5's causal buckets halved, slopes returned as exponents and NTK with s - 1 were hit only through
an echo); no message named a cause the student had not made (expected scores at base² were called "d/2 as the
dimension", the same ladder, which the message now says). Then: positions evenly spaced at the mean spacing; two more
feature maps; a cache in reverse order; cosines where only sines remain; a wavelength divided by d/2; sines of
negative angles; shifted rows in reverse order; a half of 2-D RoPE at twice or half the frequencies; slopes returned
as their exponents; and two generic readings for every checker that compares with a reference: an answer in reverse
order along an axis, and one block of columns with the opposite sign. Batch 16 then reads 34/34 named by the keywords,
no longer held out.
Batch 17 (34 entries, one or two for each of 32 checkers, written at about 19:44 UTC after that generalisation,
keywords fixed before the run; measured once): one entry passed, rightly (outputs turned back at positions truncated
to integers, when the hidden positions are integers), and was removed. Of the other 33: rejected 33/33, named 22/33
(66.7 %) by the keywords, 15/33 (45.5 %) on a careful reading, and two messages named a cause the student had not
made: the table with its last column zeroed was called "sines twice" on fn(1, 2), where the zeroed cosine of position
0 equals its sine (the reading now needs two positions and non-zero sines); recovered positions off by one beyond 100
were called "1/o rounded, which is i + 1", true of two thirds of the entries only (a mistake named from its
characteristic entries alone is now said as such: "your wrong entries are exactly this slip's"). Then: two axes of the
same size exchanged, a window of unmoved keys, half of RoPE's coordinates left unrotated, and the argument probe's
integers doubled rather than increased by one (a size used as dim // 2 does not change from 16 to 17, and the probe
had said "does not use dim"). Batch 17 then reads 23/33 by the keywords, no longer held out.
Batch 18 (33 entries, one for each of the 33 checkers, written at about 19:50 UTC after the last change to the
diagnosis, keywords fixed before the run; measured once and not generalised from: the last honest measure of this
session): two entries passed and were removed: NTK's ladder times s^(-2ℓ/(d - 2)) is the rule itself, rewritten; YaRN
without the cap of the upper edge at d - 1 differs only where ceil(...) exceeds d - 1, which no realistic setting
reaches. Of the other 31: rejected 31/31, named 20/31 (64.5 %) by the keywords, 17/31 (54.8 %) on a careful reading,
and one message named a cause the student had not made (every count doubled was read part by part as "+N d: one
projection too many" for the table and the linear map too; that label is now kept to the projections' part, a defect
fixed after the measure, not a miss generalised from). Over the ten batches written in this session (9 to 18), each
measured once before any change made with it in view: 351 of 352 mistakes rejected, 220 of 352 named on a careful
reading (62.5 %), 11 messages naming a cause the student had not made; far from the 95 % asked. Once generalised from,
each batch reads 84-100 %: the diagnosis learns every family it is shown, but about a third of each new batch's slips
fall outside the families learnt so far.

Third pass (22:10-22:50 UTC on 2026-11-28): a different approach, generic readings shared by every checker
(``posenc.exercises._transforms`` and ``_output_readings``): the transformation of the right answer that reproduces a
wrong one exactly on every failed case (an argument one off, doubled, halved, squared, inverted, negated, reversed or
replaced by another; the output scaled or offset by a constant or an expression of the arguments, raised to a power,
shifted, permuted, signed or zeroed in part, scaled per index, wrong in one part only; a row that sees later rows or
other rows), and two properties (a function of j - i, rows that sum to 1); the checkers with their own diagnosis read
them on a few probe inputs. With them, and no entry changed, batches 9 to 18 (the 352 mistakes measured at 62.5 % on
a careful reading when each was new) read 317/352 (90.1 %) by the keywords at the end of this pass (none of those
figures is held out any more).
Batch 19 (52 mistakes, written after the generic readings, measured once): rejected 52/52, named 45/52 (86.5 %) by the
keywords, 47/52 (90.4 %) on a careful reading (five keyword misses name the mistake: "positions + 1", "positions start
at -1", "start at 1" twice, "the 1-D ladder" for √base; three hits only echo: NTK's d/(d - 1) said as a wrong base,
repeat_kv's [0, 0, 0, 1] said as a restatement, T5's doubled max_distance, whose second setting was called "the
max_distance argument is ignored", a cause the student had not made). Then: the causal reading, a part wrong alone, T5's
probes with every argument given, bool arguments, two readings said together when the inputs cannot separate them, and
T5's "ignored" said only when every setting agrees. Batch 20 (51 mistakes, written after that, measured once): rejected
51/51, named 41/51 (80.4 %) by the keywords, 40/51 (78.4 %) on a careful reading, and three messages named a cause
the student had not made (a mean over the rows of y called a missing causal mask; half the trace read as "a factor 2
missing" from the identity case alone; a d - 2 exponent called a wrong base at dim = 4). Then: a row mixed with the
others told from a causal sum, reversed order on the probes, the first k entries said in the arguments' terms ("the
first sinks entries"), a constant factor or offset named only when every failed case has it, dim = 4 said as
ambiguous, a count's ratio. Batch 21 (45 mistakes, written after the last change of this pass, measured once: the last
honest figure): rejected 45/45, named 38/45 (84.4 %) by the keywords, 36/45 (80.0 %) on a careful reading; three
messages named a cause the student had not made (a window one key short called "window and sinks swapped" from one
case, where identical raw keys make the two agree; the last pair left unrotated called half precision; doubled ALiBi
slopes called "heads numbered from 0" from n = 8, where the two agree), the first of which was fixed afterwards (two
arguments swapped is said only when every failed case shows it). Over the three batches of this pass, each measured
once when new: 148/148 rejected, 123/148 named on a careful reading (83.1 %), short of the 95 % asked; the generic
readings name most slips of an argument or of the output's shape, and the misses are slips inside a formula (a feature
map, a blend, a per-entry rule) that no transformation of the right answer reproduces.

Fourth pass (01:05-01:55 UTC on 2026-11-29, a new session). First the known defects and the misses of batches 19-21,
by family: half precision is said only when every pair is off by no more than half precision's rounding of its angle
(a pair left unrotated is read as such, "your last pair (ℓ = 3) is not rotated"); a slip of the slopes' exponent (heads
numbered from 0, the factor 8) is named only when the answer follows it at 4, 6, 12 and 16 heads too (doubled slopes
are "2 times the right one"); the relative shift has the generic readings (on its visible entries) and a reading of
the column each entry was read from, as one formula in r, j, Lq and Lk; a factor on the output comes before an
argument scaled, and an exact transformation is said before an exercise's own property ("1/2 times the right one",
then "your denominator is not ..."); positions tripled; RoPE's frequency slips for the positional head and the
streaming cache, and a cache read row by row ("rows 0..4 hold the keys at positions 0..4, unmoved"). With these,
batches 19, 20 and 21 read 48/52, 48/51 and 45/45 by the keywords (no longer held out).
Batch 22 (45 mistakes, written after those changes, measured once): rejected 45/45, named 36/45 (80.0 %) by the
keywords and 36/45 on a careful reading (three keyword hits only echo: the slopes broadcast along the wrong axis, read
as "not a function of j - i", and two rules of the extended rows restated; three misses are named: rows then columns
called the axial matrix, and YaRN's and llama3's swapped arguments, named only by posenc's own ValueError, which a
hand-written rule would not raise); one message named a cause the student had not made (positions counted from the
first, called "the row index", equal on consecutive positions; now said as both). Then, by family: a precision read
before an exercise's property (a per-step factor rounded to float16), RoPE read by the positions each token is turned
by (from the angles of every pair, unwrapped around the right ones for far positions) and by the coordinates it pairs
(each basis vector turned at position 1), 2-D RoPE half by half, a table read by the rule of the rows it reads (m // L,
m L / (length - 1)), T5's max_exact at n // 4 or n, a relative shift modulo Lk (a roll), and a wrong shape that reads as
permuted axes said with a property of the cases whose sizes agree. Batch 22 then reads 42/45.
Batch 23 (42 mistakes, written after that, measured once): one passed (Shaw's queries placed at the end of the keys,
k_len - q_len + r: every hidden case had query_offset = k_len - q_len; a case of queries followed by later keys was
added afterwards), so rejected 41/42; named 38/42 (90.5 %) by the keywords, 36/42 (85.7 %) on a careful reading, and
two messages named a cause the student had not made (square weights transposed called "normalised over the queries";
llama3's high_freq_factor, used where it has no effect, called "not used"). Then: a wrong shape read from the values (a
factor still to multiply an argument, a tensor still to reduce with .max()), every axis twice as long, transposed
weights, "does not depend on" for an argument without effect, base² said as a doubled exponent, queries placed at the
end of the keys, a pairing said only when every coordinate has a partner. Batch 23 then reads 42/42.
Batch 24 (41 mistakes, written after that, measured once): rejected 41/41, named 30/41 (73.2 %) by the keywords, 27/41
(65.9 %) on a careful reading, and five messages named a cause the student had not made (a transposed mask advised to
fill with -inf; a decay rate spread over the steps, within the tolerance of one step of decay on three small-lr wd
cases, called "one step"; Shaw's keys counted with q_len, whose failures coincide with the cases that have an offset,
given the query_offset hint; logspace slopes called "a step of 1 whatever n" from one head; a padding row, a bias).
Then each was fixed (the transposed mask named; a mistake said for most failed cases only where the answer equals it far
within the tolerance or by its characteristic entries; a non-square case with no offset; "whatever n" checked at 4 and
16 heads, logspace slopes read by their fixed ends; +d said as a bias or an extra row), and, by family: half precision
for the checkers with their own diagnosis, an unrotated output read by the positions it was turned back by (float16
positions show as 49984, 50016), pairs left unrotated in the positional head's query, a sine and a cosine of one angle
beyond π/2 no longer called two frequencies, a shift clamped at the edge, tensor2tensor's exponent read from position 1.
Batch 24 then reads 38/41. Over the three batches of this pass, each measured once when new: 127/128 rejected, 99/128
named on a careful reading (77.3 %), 8 messages naming a cause the student had not made; short of the 95 % asked,
and below the third pass's 83.1 %: every new batch still finds slips (a normalisation by another quantity, a reflection,
float32 frequencies far from the others) that no reading reproduces, and each batch found a few per-case readings that
one hidden input could not separate.

Fifth pass (04:15-04:50 UTC on 2026-11-29, a new session, no new batch written): instead of one more family per miss,
readings that need no model of the slip (``posenc.exercises._structure``), said when no transformation reproduces the
answer. Where the answer is wrong, in the exercise's own terms: the one region that holds every wrong entry and leaves
the rest right (a diagonal, the entries above or below one, column - row beyond a bound said in the arguments' terms
such as ``rel_logits.shape[-1] - rel_logits.shape[-2]``, the indices from k on or the first k along an axis with k as
``sinks`` or ``dim/4``, the odd or even ones, the entries where an argument or the right value is negative, positive or
beyond a level, the pairs with ``positions[j] > positions[i]``), said with what the answer holds there (0, one value,
the opposite sign, a factor, an offset, the mirror image); a region that is right at one entry only (position 0, the
frequency 1 of pair 0), or right only where the right value is 0 (a masked part), is not said. How the answer relates to
the right one: its absolute value, clamped at a value, transposed, turned by half a turn, off by a term of ``j - i``
only (read where the right answer is no function of ``j - i``) or of one index only (a step, ``c·k``), one factor or one
offset per input that no expression of the arguments gives (a normalisation by another quantity; not said where the
right answer is a constant times an argument, as decayed rows are), a factor of ``j - i``, the right values in other
places, the right magnitudes with scattered signs; an error that grows with an index while every entry stays close
(both causes said: a precision lost, a constant slightly off); which hidden inputs fail, when one setting alone sets
two or more failed inputs apart from two or more passed ones ("cache_len ≥ 12"). Among the argument slips, a tensor
with the sign of its odd coordinates (or of its second half) flipped, which reads a reflection in place of a rotation;
positions read off a rotation that are the given ones rounded to float16, bfloat16 or float32; the frequency ladders of
every RoPE exercise for the sinusoidal table; ``a R + b`` with ``b`` an argument that is 0 on one case
(``-padding_idx``, the padded positions now read by the catalogue when real tokens are miscounted); one slice zeroed is
said as such, not as "its own factor (1, 1, 1, ...)". Honesty: the generic tail of a located slip names no cause ("your
formula goes wrong there only, so look at what it computes for those entries"), a scalar answer is never "clamped", an
exercise's own property is preferred over a generic reading when both describe failed cases, and the structural
readings use the checker's own absolute tolerance (0 for frequencies, whose slow pairs are tiny). With these, and no
entry or keyword changed, batches 1 and 2 read 87/89 named by the keywords, 3-7 all named, 8 14/15, 9 65/71, 10 12/13,
11-13 all, 14 34/37, 15 27/31, 16 34/34, 17 26/33, 18 24/31, 19 48/52, 20 48/51, 21 45/45, 22 42/45, 23 42/42, 24
40/41 (batches 22-24: 124/128, 122/128 before this pass): 800 of 842 (95.0 %, 796 before), none of them held out. Most
structural readings add a location to messages that already named their slip; the measure of this pass is the next
unseen batch.
Batch 25 (104 mistakes for all 33 checkers, written at about 04:15-04:50 UTC by a separate session from the exercises,
their solutions and each checker's signature and first docstring line only, never calling a checker, keywords fixed
before the run, while the checkers were being changed by another session that did not see it; measured once at 04:49
UTC, after that session's last change): rejected 102/104, named 90/104 (86.5 %) by the keywords. On a careful reading
by a third session: 97/104 named (93.3 %; 97 of the 102 rejected, 95.1 %), no message naming a cause the student had
not made; ten keyword misses name their slip in other words ("you returned 1/o rounded, which is i + 1: subtract 1",
"the padding_idx argument is ignored", "you add c before clipping", "you rotate the wrong way", ...) and three keyword
hits only restate the rule. The five misses: attention weights returned as log_softmax (the symptom only), T5's log
range normalised by log(max_distance), a relative shift padded on the right, the expected score with the frequencies of
a d/2-wide head, and a causal linear-attention sum that adds key i after query i (a NaN in row 0, explained only by
the generic list of causes). The two that passed formed their angles in float32: the sinusoidal table (accepted by
design, as d2l's own table does, with a precision note that names it) and RoPE on a float64 x, after which a float64
case at far positions was added and such an answer is rejected ("x is float64, but ... the angles seem to be formed in
float32"), while a float32 x with float32 angles, transformers' own way, keeps its note.
Then, after batch 25 (04:55-05:10 UTC), each miss by its family rather than its one rendering, and the messages
that could mislead made to say what is certain and both readings where the inputs cannot separate them: weights whose
exponentials sum to 1 on every row are "log-probabilities" (log_softmax or the log of the softmax), said with whether
their exponentials are right; T5's logarithmic buckets are read back as the interval of normalisers L that produces
them, said with the usual expressions that fall inside it, all of them ("log(num_buckets) and log(2 · max_distance /
max_exact) ... the inputs cannot tell them apart"), and where the last bucket begins; a relative shift that reads its
own row at column j - r (a zero column padded on the right, whichever view it is read through, or that index) is said
as such; an expected score with terms at θ_0, θ_2, ... only is "the frequencies of a head of width d/2", however the
ladder was duplicated; causal linear sums that leave key i out of its row are compared on the finite rows, said for
both sums or the one that does it, with row 0's 0/0 explained as an empty sum. T5's past and future swapped says which
half the keys before the query reach and offers both causes (j - i negated, or the wrong sign sent to the upper half)
instead of "you seem to use i - j"; slopes 2^(-h) are "the first 6 slopes of 8 heads, or a fixed step written for any
n"; the asymmetry's wrong sign offers the reversed subtraction and the other vector conjugated; llama3's interval
remark names the factor used the wrong way beside an unclamped blend. Each family has two renderings in
tests/test_exercises.py. Batch 25 then reads 103/104 rejected and 93/104 named by the keywords (the eleven keyword
misses are the ten that name their slip in other words and the sinusoidal table with float32 angles, accepted by
design with a note), 103/104 on the careful reading's terms, no message naming a cause the student had not made; it is
no longer held out; the checkers read batches 1-24 as before this change.
Batch 26 (written blind at about 05:50 UTC by another session, after every change above, from the exercises, their
solutions and each checker's signature and first docstring line; 106 entries, of which three the writer had glimpsed in
batch 1 are left out, and one, ALiBi's symmetric -m|j - i| for the causal bias, was removed as correct: it equals
m_r (j - i) on every entry the exercise defines, as in batch 9; measured once at 05:55 UTC): rejected 101/102, named
87/102 by the keywords; on a careful reading by a third session 98/102 named (96.1 %), but two messages named a cause
the student had not made (decode positions one early, whose "positions of the last num_new cached tokens" was read off a
case of one new token; counts in reverse order called an off-by-one and one projection counted). The one that passed:
the score asymmetry with float32 angles on float64 inputs, whose hidden offsets were all small. The misses: 2-D RoPE in
blocks of four (pairs alternating row and column), counts in reverse order, a relative shift by r the other way.
Then, after batch 26: a shift of -1 in decode positions is "positions start one early, at cache_len - 1", the last
num_new cached tokens said only for a shift of -num_new with num_new > 1; counts that are the right ones in another
order are said as such before any per-part reading, and a 1-D answer too short to tell a shift from a reordering is no
longer called shifted; the score asymmetry has a hidden case with offsets up to 10^5 on float64 inputs, where float32
angles fail and are named; 2-D RoPE is read pair by pair for the axis each pair turns at ("coordinates 0-1, 4-5 turn
at the row and 2-3, 6-7 at the column"); a relative shift that reads rel_logits[..., r, j + r] is "row r moved left by
r"; a streaming cache without its sinks says so; ALiBi's pass says that entries above the diagonal are not checked.
Batch 26 then reads 102/102 rejected, 91/102 named by the keywords (no longer held out); all batches 1047/1048
rejected (the sinusoidal table with float32 angles, accepted by design), 986/1048 named by the keywords.
Then (2026-11-29, 07:40 UTC) the sinusoidal table with float32 angles is rejected on the long table, where it drifts by
about i·2^-24 from the float64 reference, and named ("the angles i·θ_ℓ are formed in float32, as d2l's ... tables
do"): chapter 3 forms its angles in float64 and its exercise asks for torch.allclose on a long table, which such a
table misses. RoPE on a float32 x with float32 angles keeps its note (chapter 7: production code forms them so). All
batches: 1048/1048 rejected, 987/1048 named by the keywords, none held out.
Then an audit for wrong causes (07:20-07:30 UTC, without batch 27): about 170 slips chosen to coincide with another
named slip on some hidden case, tried on every checker; 17 messages that asserted the other slip's cause were fixed by
family (read off the case that separates them, or said with both readings), and kept in the tests (NO_WRONG_CAUSE).
Batch 27 (128 mistakes for all 33 checkers, written blind at 07:09-07:18 UTC by a separate session from the exercises,
their solutions and each checker's signature and first docstring line, never calling a checker; it glimpsed this
file's helper names and the start of one checker's list of named mistakes, none of which it used; measured once at
07:33 UTC, after every change above): rejected 127/128, named 109/128 (85.2 %) by the keywords. On a careful reading by
two other sessions (cases 1-64 and 65-128): 111/128 named (86.7 %; 111 of the 127 rejected, 87.4 %), and seven messages
named a cause the student had not made: T5 capped at n called uncapped, T5 without halving called an ignored or scaled
num_buckets, ALiBi's extra slopes called odd-indexed when they were right, 2-D RoPE's default base on one half called
base squared (every hidden base was 100, whose square is 10000), YaRN's pair in the other order called "a float", NTK's
d // (d - 2) called a missing exponent, dynamic NTK's "- s - 1" read off one case as min(seq_len, L). The one that
passed counted the streaming cache's token axis from the front: every hidden cache had exactly one leading axis. The
batch tried kinds of slip earlier batches had not (the arguments' units and roles, axes counted from the front,
operator precedence, degrees, conventions of two chapters mixed), for which the checkers had no reading.
Then, after batch 27 (07:35-08:00 UTC), by family: hidden caches and inputs with 0, 1 and 2 leading axes, and failed
inputs set apart by their number of axes said as an axis counted from the front (also for an error raised only
there); a wavelength 180/π or π/180 times the right one said as degrees; the exponent's parentheses lost; an arange
whose end is below its start explained; the YaRN pair in the other order; logarithms of two bases in YaRN's pair index;
turns counted over s·L or L/s; llama3 read on λ/L; dynamic NTK's "- s - 1", max(seq_len, s·L), seq_len - 1 and the
static factor beyond L, with the scale s_n read back from the base instead of "check which term carries which
exponent" (said now only where the base is a product of the right quantities); NTK's exponent offered as missing or
computed by integer division; PI's factor inside the exponent; a relative shift that reads offset 0 for every past key
(the offset taken as i - j); T5 capped at n or n - 2 and T5 without halving, with a reading kept only if it fits every
failed case (said from a case that shows it alone, or with both readings); ALiBi's extra slopes checked before they
are blamed; 2-D RoPE's half at the default base decided by a probe at another base; weights read transposed named
(cross-attention); arguments changed in place named as the signature names them. Each family has two renderings in
tests/test_exercises.py or tests/test_checker_causes.py. Batch 27 then reads 128/128 rejected and 120/128 named by the
keywords (no longer held out); all batches 1176/1176 rejected, 1110/1176 named by the keywords.
Batch 28 (97 entries for all 33 checkers, written at about 07:53-07:58 UTC by another session in the same way, after
every change above; twelve of them coincide with mistakes it had glimpsed, listed in its README; one, ALiBi's symmetric
-m|j - i| for the causal bias, is correct and left out; measured once at 07:59 UTC): rejected 96/96, named 86/96 by the
keywords; on a careful reading by two other sessions 95/96 named (99.0 %), and the 81 blind entries 81/81 named with
no wrong cause. The miss, not blind: a bias from ALiBi's own slopes for 12 heads (the interleaved completion), whose
generic per-head reading ended "a normalisation or a count that depends on that index is wrong", counted strictly as
a wrong cause. A borderline one: the score asymmetry with the base hard-coded was offered "d/2 as the dimension, or the
base squared" first, which its passed cases ruled out (the only other hidden base was 100, whose square is 10000).
Then, after batch 28: the "own slopes" model covers ALiBi's completion for head counts that are not powers of two; a
per-slice factor says only what multiplies it; the score asymmetry's second base is 500, so an ignored base is named as
such; the missing conjugate is named beside the sum in the cross term; an option that never reaches its branch (an
ignored argument, or option == 'a' or 'b', always true) is named in the extended rows; a RoPE pair whose second half
reads the first after it was overwritten through a view is named; tiled key-value heads say which mechanisms tile.
Batch 28 then reads 96/96 rejected, 87/96 named by the keywords; all batches 1272/1272 rejected, 1197/1272 named by the
keywords (none held out).
Batch 29 (89 mistakes for all 33 checkers, written at about 08:02-08:13 UTC by another session that did not open this
file, any earlier batch or the checkers beyond their signatures, and used none of the mistakes the issue names; measured
once at 08:14 UTC, after every change above): rejected 89/89, named 80/89 by the keywords; on a careful reading by two
other sessions 87/89 named (97.8 %), and one message named a cause the student had not made: dynamic NTK with n // L,
whose only failed setting (300 // 256 = 1) drew the generic "an exponent is 0.8707 times what it should be" first. The
other miss: Shaw's query_offset added to the key positions (only "the cases with query_offset > 0 failed").
Then, after batch 29: dynamic NTK's integer ratio n // L is modelled and one hidden length is no multiple of L; a power
of the right values that no simple slip gives is said without a cause; query_offset on the keys is named; T5's sign
slip in one setting only no longer offers a negated j - i, which the passed settings rule out; llama3's inverted blend
and swapped factors are said as one either-or. Batch 29 then reads 89/89 rejected, 81/89 named by the keywords; all
batches 1361/1361 rejected, 1277/1361 named by the keywords (none held out).
Batch 30 (88 entries for all 33 checkers, written at about 08:26-08:29 UTC by another session in the same way as batch
29; one, ALiBi's symmetric -m|j - i| for the causal bias, is correct and left out; measured once at 08:29 UTC, after
every change above): rejected 87/87, named 82/87 by the keywords; on a careful reading by two other sessions 86/87
named (98.9 %), no message naming a cause the student had not made, and no either-or led by a reading the passed cases
rule out. This is the honest held-out measure of the checkers at commit 589db26. The miss: ALiBi slopes in base e,
said only as "the right ones raised to the power 1.443". Then a power that is log c / log b is said as a power of c
where a power of b belongs (e for 2, 2 for 10, ...). Batch 30 is then no longer held out; all batches 1448/1448
rejected, 1359/1448 named by the keywords.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

import posenc
import posenc.exercises as ex
from posenc import alibi_slopes, apply_rope, relative_positions, rope_frequencies
from posenc.rotary import complex_pairs


@dataclass(frozen=True)
class Heldout:
    checker: str
    name: str
    fn: Callable[..., Any]
    keywords: tuple[str, ...]


def _ar(dim: int) -> torch.Tensor:
    return torch.arange(0, dim, 2).float()


# --------------------------------------------------------------------------- PI

def pi_times(dim, base, factor):
    inv = 1.0 / (base ** (_ar(dim) / dim))
    return inv * factor


def pi_base_times_factor(dim, base, factor):
    return torch.pow(base * factor, -torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def pi_half_exponent(dim, base, factor):
    return base ** (-torch.arange(dim // 2, dtype=torch.float64) / dim) / factor


def pi_linspace(dim, base, factor):
    return base ** -torch.linspace(0, 1, dim // 2, dtype=torch.float64) / factor


def pi_no_minus(dim, base, factor):
    return base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim) / factor


def pi_wavelengths(dim, base, factor):
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return 2 * math.pi / theta * factor


# --------------------------------------------------------------------------- NTK

def ntk_and_pi(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    return 1.0 / new_base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim) / factor


def ntk_inverted_exponent(dim, base, factor):
    new_base = base * factor ** ((dim - 2) / dim)
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def ntk_exponent_on_base(dim, base, factor):
    new_base = base ** (dim / (dim - 2)) * factor
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def ntk_pow_no_exponent(dim, base, factor):
    return torch.pow(torch.tensor(base * factor, dtype=torch.float64), -torch.arange(0, dim, 2) / dim)


def ntk_exponent_on_product(dim, base, factor):
    new_base = (base * factor) ** (dim / (dim - 2))
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def ntk_float32_base(dim, base, factor):  # divides the base instead
    new_base = base / factor ** (dim / (dim - 2))
    return 1.0 / (new_base ** (_ar(dim) / dim))


# --------------------------------------------------------------------------- dynamic NTK

def _ntk(dim, base, scale):
    return (base * scale ** (dim / (dim - 2))) ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def dyn_no_max(dim, base, factor, train_len, seq_len):
    return _ntk(dim, base, factor * seq_len / train_len - (factor - 1))


def dyn_ratio_only(dim, base, factor, train_len, seq_len):
    n = max(seq_len, train_len)
    return _ntk(dim, base, n / train_len)


def dyn_no_exponent(dim, base, factor, train_len, seq_len):
    n = max(seq_len, train_len)
    scale = factor * n / train_len - (factor - 1)
    return (base * scale) ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def dyn_min(dim, base, factor, train_len, seq_len):
    n = min(seq_len, train_len)
    return _ntk(dim, base, factor * n / train_len - (factor - 1))


def dyn_ratio_inverted(dim, base, factor, train_len, seq_len):
    n = max(seq_len, train_len)
    return _ntk(dim, base, factor * train_len / n - (factor - 1))


# --------------------------------------------------------------------------- YaRN

def _yarn(dim, base, factor, train_len, beta_fast, beta_slow, *, invert=False, coordinate=False, two_pi=True,
          trunc=False):
    def at(turns):
        return dim * math.log(train_len / (turns * (2 * math.pi if two_pi else 1.0))) / (2 * math.log(base))

    low, high = at(beta_fast), at(beta_slow)
    if trunc:
        low, high = int(low), int(high)
    else:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    index = torch.arange(0, dim, 2, dtype=torch.float64) if coordinate else torch.arange(dim // 2, dtype=torch.float64)
    ramp = ((index - low) / (high - low)).clamp(0, 1)  # 0 = keep, 1 = interpolate
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    if invert:
        return theta * ramp + theta / factor * (1 - ramp)
    return theta * (1 - ramp) + theta / factor * ramp


def yarn_keep_slow(*args):
    return _yarn(*args, invert=True)


def yarn_coordinate_index(*args):
    return _yarn(*args, coordinate=True)


def yarn_no_two_pi(*args):
    return _yarn(*args, two_pi=False)


def yarn_int_bounds(*args):
    return _yarn(*args, trunc=True)


def yarn_everything_divided(dim, base, factor, train_len, beta_fast, beta_slow):
    theta = 1.0 / base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return theta / factor, 0.1 * math.log(factor) + 1


# --------------------------------------------------------------------------- llama3

def _llama(dim, base, factor, train_len, low, high, *, wavelength=None, clamp=True, invert=False, outer_swapped=False):
    inv = 1.0 / base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    wavelen = 2 * math.pi / inv if wavelength is None else wavelength(inv)
    smooth = (train_len / wavelen - low) / (high - low)
    if invert:
        smooth = 1 - smooth
    blended = (1 - smooth) * inv / factor + smooth * inv
    if not clamp:
        return blended
    fast = wavelen < train_len / high
    slow = wavelen > train_len / low
    if outer_swapped:
        return torch.where(fast, inv / factor, torch.where(slow, inv, blended))
    return torch.where(fast, inv, torch.where(slow, inv / factor, blended))


def llama_no_two_pi(*args):
    return _llama(*args, wavelength=lambda inv: 1.0 / inv)


def llama_no_where(*args):
    return _llama(*args, clamp=False)


def llama_band_inverted(*args):
    return _llama(*args, invert=True)


def llama_outer_swapped(*args):
    return _llama(*args, outer_swapped=True)


def llama_period_in_degrees(*args):
    return _llama(*args, wavelength=lambda inv: 360.0 / inv)


# --------------------------------------------------------------------------- cross-attention

def cross_scale_by_model_width(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(y.shape[-1])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def cross_softmax_dim0(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[-1])
    return torch.softmax(scores, dim=0) @ (z @ w_v)


def cross_no_value_projection(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_q.shape[1])
    return scores.softmax(-1) @ z


def cross_keys_as_values(y, z, w_q, w_k, w_v):
    q, k = y @ w_q, z @ w_k
    weights = torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1)
    return weights @ k


def cross_no_scale(y, z, w_q, w_k, w_v):
    return torch.softmax(torch.einsum("md,nd->mn", y @ w_q, z @ w_k), dim=1) @ (z @ w_v)


# --------------------------------------------------------------------------- weight decay

def decay_float32(initial, lr, weight_decay, steps):
    factor = torch.tensor(1.0 - lr * weight_decay, dtype=torch.float32)
    return initial * factor**steps


def decay_linear(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay * steps)


def decay_exp(initial, lr, weight_decay, steps):
    return initial * math.exp(-lr * weight_decay * steps)


def decay_loop_short(initial, lr, weight_decay, steps):
    row = initial.clone() if isinstance(initial, torch.Tensor) else initial
    for _ in range(steps - 1):
        row = row - lr * weight_decay * row
    return row


def decay_no_lr(initial, lr, weight_decay, steps):
    return initial * (1 - weight_decay) ** steps


# --------------------------------------------------------------------------- ALiBi from slopes

def alibi_recomputed_slopes(slopes, length):
    h = len(slopes)
    mine = torch.tensor([2 ** (-8 * (r + 1) / h) for r in range(h)], dtype=torch.float64)
    pos = torch.arange(length)
    return mine[:, None, None] * (pos[None, :] - pos[:, None])


def alibi_i_minus_j(slopes, length):
    pos = torch.arange(length)
    return slopes[:, None, None] * (pos[:, None] - pos[None, :])


def alibi_keys_only(slopes, length):
    return slopes.view(-1, 1, 1) * torch.arange(length).view(1, 1, -1).expand(1, length, length)


def alibi_last_axis(slopes, length):
    pos = torch.arange(length)
    rel = (pos[None, :] - pos[:, None]).to(slopes.dtype)
    return (rel[:, :, None] * slopes).permute(1, 0, 2)


HELDOUT: list[Heldout] = [
    Heldout("check_pi_frequencies", "multiplied by the factor", pi_times, ("multipl",)),
    Heldout("check_pi_frequencies", "base times factor", pi_base_times_factor, ("base",)),
    Heldout("check_pi_frequencies", "exponent without 2", pi_half_exponent, ("2ℓ/d", "factor 2")),
    Heldout("check_pi_frequencies", "linspace exponent", pi_linspace, ("linspace", "d - 2", "d-2", "(d-2)")),
    Heldout("check_pi_frequencies", "exponent sign", pi_no_minus, ("minus", "negative", "sign")),
    Heldout("check_pi_frequencies", "wavelengths returned", pi_wavelengths, ("wavelength",)),
    Heldout("check_ntk_frequencies", "NTK and PI", ntk_and_pi, ("both", "also divid", "pi")),
    Heldout("check_ntk_frequencies", "(d-2)/d", ntk_inverted_exponent, ("(d-2)/d", "invert")),
    Heldout("check_ntk_frequencies", "exponent on base", ntk_exponent_on_base, ("exponent",)),
    Heldout("check_ntk_frequencies", "no exponent", ntk_pow_no_exponent, ("exponent",)),
    Heldout("check_ntk_frequencies", "exponent on product", ntk_exponent_on_product, ("exponent",)),
    Heldout("check_ntk_frequencies", "base divided", ntk_float32_base, ("divid", "smaller base", "larger base")),
    Heldout("check_dynamic_ntk_frequencies", "no max", dyn_no_max, ("max(", "below")),
    Heldout("check_dynamic_ntk_frequencies", "factor ignored", dyn_ratio_only, ("factor",)),
    Heldout("check_dynamic_ntk_frequencies", "exponent missing", dyn_no_exponent, ("exponent",)),
    Heldout("check_dynamic_ntk_frequencies", "min for max", dyn_min, ("max(", "min(")),
    Heldout("check_dynamic_ntk_frequencies", "L/n", dyn_ratio_inverted, ("n/l", "l/n", "ratio", "invert")),
    Heldout("check_yarn_frequencies", "ramp reversed", yarn_keep_slow, ("wrong way", "revers", "invert")),
    Heldout("check_yarn_frequencies", "coordinate index", yarn_coordinate_index, ("pair index", "coordinate")),
    Heldout("check_yarn_frequencies", "no 2π", yarn_no_two_pi, ("2π",)),
    Heldout("check_yarn_frequencies", "int() bounds", yarn_int_bounds, ("round", "ceil", "floor")),
    Heldout("check_yarn_frequencies", "PI everywhere", yarn_everything_divided, ("pi's", "every pair", "fast pairs")),
    Heldout("check_llama3_frequencies", "no 2π", llama_no_two_pi, ("2π",)),
    Heldout("check_llama3_frequencies", "no where/clamp", llama_no_where, ("clamp", "outside the band")),
    Heldout("check_llama3_frequencies", "band inverted", llama_band_inverted, ("invert",)),
    Heldout("check_llama3_frequencies", "outer regimes swapped", llama_outer_swapped, ("fast", "slow")),
    Heldout("check_llama3_frequencies", "degrees", llama_period_in_degrees, ("2π", "degree", "wavelength")),
    Heldout("check_cross_attention", "scaled by sqrt(d)", cross_scale_by_model_width, ("d_k", "scale")),
    Heldout("check_cross_attention", "softmax over queries", cross_softmax_dim0, ("softmax", "axis", "queries")),
    Heldout("check_cross_attention", "W_V not applied", cross_no_value_projection, ("w_v", "value projection")),
    Heldout("check_cross_attention", "keys as values", cross_keys_as_values, ("w_v", "value", "keys")),
    Heldout("check_cross_attention", "no scale", cross_no_scale, ("scale", "sqrt")),
    Heldout("check_decayed_rows", "float32", decay_float32, ("precision", "float32", "float64")),
    Heldout("check_decayed_rows", "linear", decay_linear, ("linear",)),
    Heldout("check_decayed_rows", "exp", decay_exp, ("exp",)),
    Heldout("check_decayed_rows", "one step short", decay_loop_short, ("steps - 1", "one step", "off by one")),
    Heldout("check_decayed_rows", "no lr", decay_no_lr, ("learning rate", "lr")),
    Heldout("check_alibi_bias_from_slopes", "slopes recomputed", alibi_recomputed_slopes, ("slopes",)),
    Heldout("check_alibi_bias_from_slopes", "i - j", alibi_i_minus_j, ("sign",)),
    Heldout("check_alibi_bias_from_slopes", "keys only", alibi_keys_only, ("j - i", "j − i", "key")),
    Heldout("check_alibi_bias_from_slopes", "heads on the last axis", alibi_last_axis, ("head", "axis", "broadcast")),
]


# =========================================================================== batch 2
# Written at about 13:41 UTC, before any of these checkers was changed (check_attention, check_t5_bucket and the
# ALiBi-at-positions checker were already changed then and are not in this batch).


def recovery_int_low(o):
    return (1 / o - 1).int()


def recovery_no_minus(o):
    return torch.round(1 / o.double())


def recovery_floor_ratio(o):
    o = o.double()
    return ((1 - o) / o).floor().long()


def counts_bias_in_part2(n, d):
    return (n * d, n * d + d, 3 * n * d)


def counts_bias_in_part3(n, d):
    return (n * d, n * d, 3 * n * d + 3 * d)


def counts_whole_map(n, d):
    return (n * d, (n + d) * d, 3 * n * d)


def counts_q_and_k_only(n, d):
    return (n * d, n * d, 2 * n * d)


def _t2t_table(seq_len, dim, base, *, cos_first=False, denominator=None, interleave=False, start=0):
    half = dim // 2
    exponent = torch.arange(half, dtype=torch.float64) / ((half - 1) if denominator is None else denominator(half))
    angles = torch.arange(start, start + seq_len, dtype=torch.float64)[:, None] * base ** -exponent
    if interleave:
        return torch.stack([angles.sin(), angles.cos()], -1).reshape(seq_len, dim)
    return torch.cat([angles.cos(), angles.sin()] if cos_first else [angles.sin(), angles.cos()], -1)


def t2t_cos_first(seq_len, dim, base=10000.0):
    return _t2t_table(seq_len, dim, base, cos_first=True)


def t2t_over_half(seq_len, dim, base=10000.0):
    return _t2t_table(seq_len, dim, base, denominator=lambda half: half)


def t2t_interleaved(seq_len, dim, base=10000.0):
    return _t2t_table(seq_len, dim, base, interleave=True)


def t2t_from_one(seq_len, dim, base=10000.0):
    return _t2t_table(seq_len, dim, base, start=1)


def slopes_from_zero(n):
    return [2 ** (-8 * i / n) for i in range(n)]


def slopes_geometric_always(n):
    return torch.tensor([2 ** (-8 * (i + 1) / n) for i in range(n)])


def slopes_reversed(n):
    return torch.as_tensor(posenc.alibi_slopes(n)).flip(0)


def slopes_halving(n):
    return [0.5 ** (i + 1) for i in range(n)]


def shaw_i_minus_j(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return (i - j).clamp(-c, c) + c


def shaw_no_shift(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return (j - i).clamp(-c, c)


def shaw_no_offset(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None]
    j = torch.arange(k_len)[None, :]
    return torch.clamp(j - i, min=-c, max=c) + c


def shaw_clip_low_side(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return torch.clamp(j - i, -c, max(c - 1, 0)) + c


def shift_off_by_one(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    out = torch.zeros_like(rel_logits)
    for r in range(lq):
        for j in range(lk):
            column = j + lq - r
            if 0 <= column < lk:
                out[..., r, j] = rel_logits[..., r, column]
    return out


def shift_identity(rel_logits):
    return rel_logits.clone()


def gap_output_not_reversed(layer, x):
    return (layer(x.flip(0)) - layer(x)).abs().max().item()


def gap_mean(layer, x):
    return (layer(x.flip(0)) - layer(x).flip(0)).abs().mean().item()


def gap_features_flipped(layer, x):
    return (layer(x.flip(-1)) - layer(x).flip(-1)).abs().max().item()


def _rope(x, positions=None, base=10000.0, *, sign=1.0, use_positions=True, use_base=True, half=False,
          dtype=torch.float64):
    length, dim = x.shape[-2], x.shape[-1]
    pos = torch.arange(length, dtype=dtype) if positions is None or not use_positions else positions.to(dtype)
    theta = (base if use_base else 10000.0) ** (-torch.arange(0, dim, 2, dtype=dtype) / dim)
    angles = pos[:, None] * theta
    cos, sin = angles.cos().double(), sign * angles.sin().double()
    xd = x.double()
    if half:
        a, b = xd[..., : dim // 2], xd[..., dim // 2:]
        out = torch.cat([a * cos - b * sin, a * sin + b * cos], -1)
    else:
        a, b = xd[..., 0::2], xd[..., 1::2]
        out = torch.stack([a * cos - b * sin, a * sin + b * cos], -1).flatten(-2)
    return out.to(x.dtype)


def rope_clockwise(x, positions=None, base=10000.0):
    return _rope(x, positions, base, sign=-1.0)


def rope_positions_ignored(x, positions=None, base=10000.0):
    return _rope(x, positions, base, use_positions=False)


def rope_base_ignored(x, positions=None, base=10000.0):
    return _rope(x, positions, base, use_base=False)


def rope_half_layout(x, positions=None, base=10000.0):
    return _rope(x, positions, base, half=True)


def rope_float32_angles(x, positions=None, base=10000.0):
    return _rope(x, positions, base, dtype=torch.float32)


def decode_from_zero(cache_len, num_new):
    return torch.arange(num_new)


def decode_one_late(cache_len, num_new):
    return torch.arange(cache_len + 1, cache_len + num_new + 1)


def decode_wrong_end(cache_len, num_new):
    return list(range(cache_len, max(num_new, cache_len + 1)))


def _unrotate(outputs, positions, base, sign=-1.0, use_positions=True, use_base=True):
    pos = positions if use_positions else torch.arange(outputs.shape[-2])
    return _rope(outputs, pos.double(), base if use_base else 10000.0, sign=sign)


def unrotate_forward(outputs, positions, base=10000.0):
    return _unrotate(outputs, positions, base, sign=1.0)


def unrotate_indices(outputs, positions, base=10000.0):
    return _unrotate(outputs, positions, base, use_positions=False)


def unrotate_base_ignored(outputs, positions, base=10000.0):
    return _unrotate(outputs, positions, base, use_base=False)


def kv_tiled(kv, num_heads):
    reps = num_heads // kv.shape[-3]
    return torch.cat([kv] * reps, dim=-3)


def kv_too_many(kv, num_heads):
    return kv.repeat_interleave(num_heads, dim=-3)


def kv_sequence_axis(kv, num_heads):
    reps = num_heads // kv.shape[-3]
    return kv.repeat_interleave(reps, dim=-2)


def padded_not_set(input_ids, padding_idx=1):
    mask = (input_ids != padding_idx).long()
    return torch.cumsum(mask, dim=1) + padding_idx


def padded_arange(input_ids, padding_idx=1):
    return (torch.arange(input_ids.shape[1]) + padding_idx + 1).expand_as(input_ids).clone()


def padded_hard_coded(input_ids, padding_idx=1):
    mask = (input_ids != padding_idx).long()
    return torch.cumsum(mask, dim=1) * mask + 1


def _sinusoidal(seq_len, dim, base=10000.0, *, cos_first=False, exponent=2, concatenated=False):
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    theta = base ** (-exponent * torch.arange(dim // 2, dtype=torch.float64) / dim)
    first, second = (torch.cos(pos * theta), torch.sin(pos * theta))
    if not cos_first:
        first, second = second, first
    if concatenated:
        return torch.cat([first, second], -1)
    return torch.stack([first, second], -1).reshape(seq_len, dim)


def sinusoidal_cos_first(seq_len, dim, base=10000.0):
    return _sinusoidal(seq_len, dim, base, cos_first=True)


def sinusoidal_half_exponent(seq_len, dim, base=10000.0):
    return _sinusoidal(seq_len, dim, base, exponent=1)


def sinusoidal_concatenated(seq_len, dim, base=10000.0):
    return _sinusoidal(seq_len, dim, base, concatenated=True)


def wavelength_no_exponent(dim, base):
    return 2 * math.pi * base


def wavelength_no_two_pi(dim, base):
    return base ** (1 - 2 / dim)


def wavelength_frequency(dim, base):
    return base ** (-(dim - 2) / dim)


def extended_copy_wrong_mod(table, length, option):
    rows = table.shape[0]
    m = torch.arange(length)
    if option == "clip":
        return table[m.clamp(max=rows - 1)]
    if option == "copy":
        return table[m % (rows - 1)]
    return posenc_interpolate(table, length)


def extended_interpolate_wrong_scale(table, length, option):
    rows = table.shape[0]
    m = torch.arange(length)
    if option == "clip":
        return table[m.clamp(max=rows - 1)]
    if option == "copy":
        return table[m % rows]
    where = m.double() * rows / length
    low = where.floor().long().clamp(max=rows - 1)
    high = (low + 1).clamp(max=rows - 1)
    frac = (where - low).unsqueeze(-1)
    return table[low] * (1 - frac) + table[high] * frac


def posenc_interpolate(table, length):
    rows = table.shape[0]
    where = torch.arange(length, dtype=torch.float64) * (rows - 1) / (length - 1)
    low = where.floor().long().clamp(max=rows - 1)
    high = (low + 1).clamp(max=rows - 1)
    frac = (where - low).unsqueeze(-1).to(table.dtype)
    return table[low] * (1 - frac) + table[high] * frac


HELDOUT += [
    Heldout("check_position_recovery", "int() in low precision", recovery_int_low, ("truncat",)),
    Heldout("check_position_recovery", "no - 1", recovery_no_minus, ("- 1", "i + 1")),
    Heldout("check_position_recovery", "floor of (1-o)/o", recovery_floor_ratio, ("truncat", "floor")),
    Heldout("check_position_parameter_counts", "bias in part 2", counts_bias_in_part2, ("bias",)),
    Heldout("check_position_parameter_counts", "bias in part 3", counts_bias_in_part3, ("bias",)),
    Heldout("check_position_parameter_counts", "whole map", counts_whole_map, ("whole", "linear map")),
    Heldout("check_position_parameter_counts", "Q and K only", counts_q_and_k_only, ("three", "values", "q, k and v")),
    Heldout("check_concatenated_sinusoidal", "cos first", t2t_cos_first, ("cos",)),
    Heldout("check_concatenated_sinusoidal", "ℓ/(d/2)", t2t_over_half, ("d/2 - 1", "ladder", "exponent")),
    Heldout("check_concatenated_sinusoidal", "interleaved", t2t_interleaved, ("interleav",)),
    Heldout("check_concatenated_sinusoidal", "positions from 1", t2t_from_one, ("position",)),
    Heldout("check_alibi_slopes", "h from 0", slopes_from_zero, ("from 1", "h = 1", "start")),
    Heldout("check_alibi_slopes", "geometric for every n", slopes_geometric_always, ("power of two", "power of 2")),
    Heldout("check_alibi_slopes", "reversed", slopes_reversed, ("order", "revers")),
    Heldout("check_alibi_slopes", "halving", slopes_halving, ("2^(-8", "ratio", "-8h/n")),
    Heldout("check_shaw_index", "i - j", shaw_i_minus_j, ("sign", "i - j")),
    Heldout("check_shaw_index", "no + c", shaw_no_shift, ("+ c", "shift", "negative")),
    Heldout("check_shaw_index", "query_offset ignored", shaw_no_offset, ("query_offset",)),
    Heldout("check_shaw_index", "clip to c - 1", shaw_clip_low_side, ("clip", "boundary")),
    Heldout("check_relative_shift", "off by one", shift_off_by_one, ("off by one", "one column")),
    Heldout("check_relative_shift", "identity", shift_identity, ("unshifted", "not shifted")),
    Heldout("check_reversal_gap", "output not reversed", gap_output_not_reversed, ("output", "revers")),
    Heldout("check_reversal_gap", "mean", gap_mean, ("mean",)),
    Heldout("check_reversal_gap", "features flipped", gap_features_flipped, ("feature",)),
    Heldout("check_apply_rope", "clockwise", rope_clockwise, ("direction", "sign")),
    Heldout("check_apply_rope", "positions ignored", rope_positions_ignored, ("positions",)),
    Heldout("check_apply_rope", "base ignored", rope_base_ignored, ("base",)),
    Heldout("check_apply_rope", "half layout", rope_half_layout, ("layout", "half")),
    Heldout("check_decode_positions", "from zero", decode_from_zero, ("cache",)),
    Heldout("check_decode_positions", "one late", decode_one_late, ("off by one", "cache_len + 1", "start")),
    Heldout("check_decode_positions", "wrong end", decode_wrong_end, ("cache_len + num_new", "end", "num_new")),
    Heldout("check_unrotated_outputs", "forward", unrotate_forward, ("forward", "direction", "transpose")),
    Heldout("check_unrotated_outputs", "indices", unrotate_indices, ("positions", "indices")),
    Heldout("check_unrotated_outputs", "base ignored", unrotate_base_ignored, ("base",)),
    Heldout("check_repeat_kv", "tiled", kv_tiled, ("tile", "repeat_interleave", "order", "interleav")),
    Heldout("check_repeat_kv", "too many", kv_too_many, ("h // h_kv", "group", "times")),
    Heldout("check_repeat_kv", "sequence axis", kv_sequence_axis, ("axis", "dim", "sequence")),
    Heldout("check_padded_positions", "padding not set", padded_not_set, ("padding",)),
    Heldout("check_padded_positions", "arange", padded_arange, ("pad", "count")),
    Heldout("check_padded_positions", "hard-coded 1", padded_hard_coded, ("padding_idx",)),
    Heldout("check_sinusoidal", "cos first", sinusoidal_cos_first, ("cos", "swap")),
    Heldout("check_sinusoidal", "ℓ/d", sinusoidal_half_exponent, ("2ℓ/d", "2i/d", "exponent")),
    Heldout("check_sinusoidal", "concatenated", sinusoidal_concatenated, ("layout", "interleav", "concat")),
    Heldout("check_slowest_wavelength", "no exponent", wavelength_no_exponent, ("2/d", "slowest", "last pair")),
    Heldout("check_slowest_wavelength", "no 2π", wavelength_no_two_pi, ("2π",)),
    Heldout("check_slowest_wavelength", "frequency", wavelength_frequency, ("frequency", "invert")),
    Heldout("check_extended_rows", "copy mod L-1", extended_copy_wrong_mod, ("mod", "copy")),
    Heldout("check_extended_rows", "interpolate scale", extended_interpolate_wrong_scale,
            ("(l-1)", "l - 1", "interpol")),
]


# =========================================================================== batch 3
# Written at about 13:53 UTC, after all the checker changes of this session, and measured once: no checker
# was changed after it was written, so this batch is the honest held-out measure of the changed checkers.


def b3_pi_exponent_over_half(dim, base, factor):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / (dim // 2)) / factor


def b3_ntk_half_dim(dim, base, factor):
    half = dim // 2
    return (base * factor ** (half / (half - 2))) ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b3_dynamic_static_below(dim, base, factor, train_len, seq_len):
    n = seq_len if seq_len > train_len else train_len * factor
    return _ntk(dim, base, factor * n / train_len - (factor - 1))


def b3_yarn_no_clamp(dim, base, factor, train_len, beta_fast, beta_slow):
    def at(turns):
        return dim * math.log(train_len / (turns * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(at(beta_fast)), 0), min(math.ceil(at(beta_slow)), dim - 1)
    ramp = (torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return theta * (1 - ramp) + theta / factor * ramp


def b3_llama_wavelength_times(dim, base, factor, train_len, low, high):
    return _llama(dim, base, factor, train_len, low, high, wavelength=lambda inv: 2 * math.pi * inv)


def b3_attention_small_fill(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e-9)
    weights = scores.softmax(-1)
    return weights @ v, weights


def b3_attention_tril(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = scores.softmax(-1)
    if mask is not None:
        weights = torch.tril(weights)
        weights = weights / weights.sum(-1, keepdim=True)
    return weights @ v, weights


def b3_cross_scale_wq_rows(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_q.shape[0])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def b3_decay_power_split(initial, lr, weight_decay, steps):
    return initial * (1 - lr) ** (weight_decay * steps)


def b3_alibi_two_axes(slopes, length):
    pos = torch.arange(length)
    return slopes[:, None] * (pos[None, :] - pos[:, None])


def b3_alibi_positions_rounded(slopes, positions):
    p = positions.round()
    return -slopes[:, None, None] * (p[None, :] - p[:, None]).abs()


def b3_t5_log_without_exact(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    n = num_buckets // 2 if bidirectional else num_buckets
    upper = (relative_position > 0).long() * n if bidirectional else torch.zeros_like(relative_position)
    distance = relative_position.abs() if bidirectional else (-relative_position).clamp(min=0)
    exact = n // 2
    large = exact + (torch.log(distance.clamp(min=1).float() / exact) / math.log(max_distance)
                     * (n - exact)).long()
    return upper + torch.where(distance < exact, distance, large.clamp(max=n - 1))


def b3_slopes_logspace(n):
    return torch.logspace(-8 / n, -8, n, base=2)


def b3_rope_positions_from_one(x, positions=None, base=10000.0):
    if positions is None:
        positions = torch.arange(1, x.shape[-2] + 1)
    return _rope(x, positions, base)


def b3_rope2d_full_ladder(x, rows, columns, base=10000.0):
    dim = x.shape[-1]
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64)[: dim // 4] / dim)
    halves = []
    for half, pos in zip(x.chunk(2, dim=-1), (rows, columns), strict=True):
        halves.append(posenc.apply_rope(half, pos, frequencies=theta))
    return torch.cat(halves, -1)


def b3_kv_dim_one(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=1)


def b3_sinusoidal_column_index(seq_len, dim, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    column = torch.arange(dim, dtype=torch.float64)
    angles = pos / base ** (column / dim)
    table = torch.where(column.long() % 2 == 0, angles.sin(), angles.cos())
    return table


def b3_padded_wrong_axis(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return torch.cumsum(mask, dim=0) * mask + padding_idx


def b3_unrotate_relative_to_first(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -(positions - positions[0]), base=base)


def b3_linear_relu_features(q, k, v, base=10000.0):
    phi_q, phi_k = torch.relu(q.double()) + 1, torch.relu(k.double()) + 1
    numerators = torch.tril(posenc.apply_rope(phi_q, base=base) @ posenc.apply_rope(phi_k, base=base).T)
    return numerators @ v.double() / torch.tril(phi_q @ phi_k.T).sum(-1, keepdim=True)


def b3_decode_before_cache(cache_len, num_new):
    return torch.arange(cache_len - num_new, cache_len)


def b3_stream_window_slice(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    kept = cached[..., -window - 1:-1, :]
    return torch.cat((cached[..., :sinks, :], posenc.apply_rope(kept, torch.full((window,), -shift))), dim=-2)


def b3_wavelength_pi(dim, base):
    return math.pi * base ** (1 - 2 / dim)


def b3_expected_half_exponent(cross, offsets, base=10000.0):
    pairs = cross.shape[0]
    theta = base ** (-torch.arange(pairs, dtype=torch.float64) / (2 * pairs))
    angles = offsets.double()[:, None] * theta
    c = cross.double()
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b3_asymmetry_minus_zero(query, key, offsets, base=10000.0):
    keys = posenc.apply_rope(key.expand(len(offsets), -1), offsets, base=base)
    zero = posenc.apply_rope(key[None], torch.zeros(1), base=base)[0]
    return keys @ query - zero @ query


def b3_head_double_target(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([2 * target]), base=base)[0]


def b3_rows_align_corners(table, length, option):
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1)]
    if option == "copy":
        return table[torch.arange(length) % rows]
    return torch.nn.functional.interpolate(table.T[None], size=length, mode="linear", align_corners=False)[0].T


def b3_counts_padding_row(n, d):
    return (n * d, (n + 1) * d, 3 * n * d)


HELDOUT_BATCH_3 = [
    Heldout("check_pi_frequencies", "exponent over d/2", b3_pi_exponent_over_half, ("exponent", "base^2")),
    Heldout("check_ntk_frequencies", "d/2 in the exponent", b3_ntk_half_dim, ("exponent", "d/(d-2)")),
    Heldout("check_dynamic_ntk_frequencies", "static below", b3_dynamic_static_below, ("below", "original", "max(")),
    Heldout("check_yarn_frequencies", "ramp not clamped", b3_yarn_no_clamp, ("clamp", "between")),
    Heldout("check_llama3_frequencies", "wavelength 2π θ", b3_llama_wavelength_times, ("wavelength", "2π")),
    Heldout("check_attention", "fill -1e-9", b3_attention_small_fill, ("mask", "-inf")),
    Heldout("check_attention", "tril instead of mask", b3_attention_tril, ("mask",)),
    Heldout("check_cross_attention", "sqrt(w_q rows)", b3_cross_scale_wq_rows, ("d_k", "model width", "scale")),
    Heldout("check_decayed_rows", "(1 - lr)^(wd T)", b3_decay_power_split, ("lr wd", "(1 - lr wd)")),
    Heldout("check_alibi_bias_from_slopes", "slopes[:, None]", b3_alibi_two_axes, ("head", "slopes[:, none, none]")),
    Heldout("check_alibi_bias_at_positions", "positions rounded", b3_alibi_positions_rounded,
            ("integer", "fractional", "round")),
    Heldout("check_t5_bucket", "log(max_distance)", b3_t5_log_without_exact, ("logarithmic",)),
    Heldout("check_alibi_slopes", "logspace for every n", b3_slopes_logspace, ("power of two", "geometric")),
    Heldout("check_apply_rope", "default positions from 1", b3_rope_positions_from_one, ("position",)),
    Heldout("check_apply_rope_2d", "full ladder", b3_rope2d_full_ladder, ("full dimension", "frequenc")),
    Heldout("check_repeat_kv", "dim=1", b3_kv_dim_one, ("axis", "sequence", "dim=-3")),
    Heldout("check_sinusoidal", "column index", b3_sinusoidal_column_index, ("2ℓ", "pair", "exponent")),
    Heldout("check_padded_positions", "cumsum over the batch", b3_padded_wrong_axis, ("axis", "dim", "row")),
    Heldout("check_unrotated_outputs", "relative to the first", b3_unrotate_relative_to_first, ("position",)),
    Heldout("check_linear_rope_attention", "relu features", b3_linear_relu_features, ("feature map", "elu")),
    Heldout("check_decode_positions", "before the cache", b3_decode_before_cache, ("cache_len", "start")),
    Heldout("check_streaming_cache", "window slice", b3_stream_window_slice, ("last", "window")),
    Heldout("check_slowest_wavelength", "π not 2π", b3_wavelength_pi, ("2π", "factor 2")),
    Heldout("check_expected_score", "exponent ℓ/d", b3_expected_half_exponent, ("exponent", "2ℓ/d", "θ")),
    Heldout("check_score_asymmetry", "s(δ) - s(0)", b3_asymmetry_minus_zero, ("s(-δ)", "-δ")),
    Heldout("check_positional_head_query", "2 × target", b3_head_double_target, ("twice",)),
    Heldout("check_extended_rows", "align_corners=False", b3_rows_align_corners, ("x =", "reads the table at")),
    Heldout("check_position_parameter_counts", "a padding row", b3_counts_padding_row, ("part 2",)),
]


# =========================================================================== batch 4
# Written at about 14:00 UTC, after the last change to any checker in this session; measured once, with
# no checker changed afterwards: the honest held-out measure of the final checkers.


def _th(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b4_pi_reversed(dim, base, factor):
    return (_th(dim, base) / factor).flip(0)


def b4_ntk_from_one(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    return new_base ** (-torch.arange(1, dim // 2 + 1, dtype=torch.float64) * 2 / dim)


def b4_dynamic_minus_factor(dim, base, factor, train_len, seq_len):
    n = max(seq_len, train_len)
    scale = factor * n / train_len - factor
    if scale <= 0:
        return _th(dim, base)
    return _th(dim, base * scale ** (dim / (dim - 2)))


def b4_yarn_betas_swapped(dim, base, factor, train_len, beta_fast, beta_slow):
    return _yarn(dim, base, factor, train_len, beta_slow, beta_fast)


def b4_llama_everything_reversed(dim, base, factor, train_len, low, high):
    inv = _th(dim, base)
    wavelen = 2 * math.pi / inv
    smooth = ((train_len / wavelen - low) / (high - low)).clamp(0, 1)
    return smooth * inv / factor + (1 - smooth) * inv


def b4_attention_no_softmax(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    return scores @ v, scores


def b4_attention_scale_after(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1) / math.sqrt(q.shape[-1])
    return weights @ v, weights


def b4_cross_flat_softmax(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    weights = scores.flatten().softmax(0).reshape(scores.shape)
    return weights @ (z @ w_v)


def b4_decay_amount(initial, lr, weight_decay, steps):
    return initial - initial * (1 - lr * weight_decay) ** steps


def b4_alibi_squared(slopes, length):
    pos = torch.arange(length, dtype=torch.float64)
    return -slopes.double()[:, None, None] * (pos[:, None] - pos[None, :]) ** 2


def b4_at_uniform_spacing(slopes, positions):
    step = float(positions[1] - positions[0])
    idx = torch.arange(len(positions), dtype=torch.float64)
    return -slopes.double()[:, None, None] * step * (idx[None, :] - idx[:, None]).abs()


def b4_t5_full_buckets_each_side(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    if not bidirectional:
        return posenc.t5_relative_position_bucket(relative_position, False, num_buckets, max_distance)
    n = num_buckets
    distance = relative_position.abs()
    exact = n // 2
    large = exact + (torch.log(distance.clamp(min=1).float() / exact) / math.log(max_distance / exact)
                     * (n - exact)).long()
    bucket = torch.where(distance < exact, distance, large.clamp(max=n - 1))
    return bucket + (relative_position > 0).long() * (num_buckets // 2)


def b4_slopes_from_zero_tensor(n):
    return 2 ** (-8 / n * torch.arange(n, dtype=torch.float64))


def b4_shaw_offset_subtracted(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] - query_offset
    j = torch.arange(k_len)[None, :]
    return (j - i).clamp(-c, c) + c


def b4_shift_modulo(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    out = torch.zeros_like(rel_logits)
    for r in range(lq):
        i = lk - lq + r
        for j in range(lk):
            out[..., r, j] = rel_logits[..., r, (j - i) % lk]
    return out


def b4_gap_mean_square(layer, x):
    return float(((layer(x.flip(0)) - layer(x).flip(0)) ** 2).mean())


def b4_rope_divided_angles(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    pos = torch.arange(x.shape[-2], dtype=torch.float64) if positions is None else positions.double()
    theta = _th(dim, base)
    angles = pos[:, None] / theta
    a, b = x.double()[..., 0::2], x.double()[..., 1::2]
    out = torch.stack([a * angles.cos() - b * angles.sin(), a * angles.sin() + b * angles.cos()], -1).flatten(-2)
    return out.to(x.dtype)


def b4_rope2d_rows_only(x, rows, columns, base=10000.0):
    return posenc.apply_rope(x, rows, base=base)


def b4_kv_first_axis(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=0)


def b4_sinusoidal_from_one(seq_len, dim, base=10000.0):
    return posenc.sinusoidal_encoding(seq_len + 1, dim, base)[1:]


def b4_padded_from_padding_idx(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return (torch.cumsum(mask, 1) - 1) * mask + padding_idx


def b4_unrotate_positive_exponent(outputs, positions, base=10000.0):
    dim = outputs.shape[-1]
    freqs = base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return posenc.apply_rope(outputs, -positions, frequencies=freqs)


def b4_linear_full_denominator(q, k, v, base=10000.0):
    phi_q, phi_k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    numerators = torch.tril(posenc.apply_rope(phi_q, base=base) @ posenc.apply_rope(phi_k, base=base).T)
    return numerators @ v / (phi_q @ phi_k.T).sum(-1, keepdim=True)


def b4_decode_last_repeated(cache_len, num_new):
    return torch.full((num_new,), cache_len + num_new - 1)


def b4_blocks_rows_then_columns(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    blocks = []
    for position in (row, column):
        for frequency in theta.tolist():
            c, s = math.cos(position * frequency), math.sin(position * frequency)
            blocks.append(torch.tensor([[c, -s], [s, c]], dtype=torch.float64))
    return torch.block_diag(*blocks)


def b4_wavelength_as_angle(dim, base):
    return 2 * math.pi / base ** (1 - 2 / dim)


def b4_expected_ladder_of_pairs(cross, offsets, base=10000.0):
    theta = posenc.rope_frequencies(cross.shape[0], base).double()
    angles = offsets.double()[:, None] * theta
    c = cross.double()
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b4_asymmetry_double_rotation(query, key, offsets, base=10000.0):
    def s(delta):
        keys = posenc.apply_rope(key.expand(len(delta), -1), delta, base=base)
        queries = posenc.apply_rope(query.expand(len(delta), -1), -delta, base=base)
        return (keys * queries).sum(-1)

    return s(offsets) - s(-offsets)


def b4_head_target_plus_one(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([target + 1]), base=base)[0]


def b4_rows_copy_from_one(table, length, option):
    rows = table.shape[0]
    if option == "copy":
        return table[(torch.arange(length) + 1) % rows]
    from posenc.exercises.extrapolation import reference_extended_rows

    return reference_extended_rows(table, length, option)


def b4_counts_padding_row_in_table(n, d):
    return ((n + 1) * d, n * d, 3 * n * d)


def b4_recovery_floor_then_minus(o):
    return (1 / o.double()).floor() - 1


HELDOUT_BATCH_4 = [
    Heldout("check_pi_frequencies", "order reversed", b4_pi_reversed, ("grow", "order", "revers")),
    Heldout("check_ntk_frequencies", "ℓ from 1", b4_ntk_from_one, ("from 1",)),
    Heldout("check_dynamic_ntk_frequencies", "- s", b4_dynamic_minus_factor, ("s - 1", "(s - 1)")),
    Heldout("check_yarn_frequencies", "betas swapped", b4_yarn_betas_swapped, ("swapped",)),
    Heldout("check_llama3_frequencies", "everything reversed", b4_llama_everything_reversed,
            ("wrong way", "invert", "revers")),
    Heldout("check_attention", "no softmax", b4_attention_no_softmax, ("softmax", "sum to 1", "sums to")),
    Heldout("check_attention", "scaled after softmax", b4_attention_scale_after, ("scal", "sums to", "softmax")),
    Heldout("check_cross_attention", "softmax over everything", b4_cross_flat_softmax,
            ("softmax", "each query", "axis", "sum")),
    Heldout("check_decayed_rows", "amount decayed", b4_decay_amount, ("decay", "shrink", "remain")),
    Heldout("check_alibi_bias_from_slopes", "squared distance", b4_alibi_squared, ("square", "linear")),
    Heldout("check_alibi_bias_at_positions", "uniform spacing assumed", b4_at_uniform_spacing, ("position",)),
    Heldout("check_t5_bucket", "full buckets each side", b4_t5_full_buckets_each_side,
            ("half", "num_buckets // 2", "upper")),
    Heldout("check_alibi_slopes", "from 0", b4_slopes_from_zero_tensor, ("from 0",)),
    Heldout("check_shaw_index", "offset subtracted", b4_shaw_offset_subtracted, ("query_offset",)),
    Heldout("check_relative_shift", "modulo", b4_shift_modulo, ("column", "offset", "read")),
    Heldout("check_reversal_gap", "mean square", b4_gap_mean_square, ("mean", "max", "largest")),
    Heldout("check_apply_rope", "angles divided", b4_rope_divided_angles, ("frequenc", "θ", "angle")),
    Heldout("check_apply_rope_2d", "rows only", b4_rope2d_rows_only, ("column",)),
    Heldout("check_repeat_kv", "first axis", b4_kv_first_axis, ("axis", "dim=-3")),
    Heldout("check_sinusoidal", "positions from 1", b4_sinusoidal_from_one, ("position",)),
    Heldout("check_padded_positions", "start at padding_idx", b4_padded_from_padding_idx, ("off by one",)),
    Heldout("check_unrotated_outputs", "exponent sign", b4_unrotate_positive_exponent,
            ("base", "exponent", "frequenc")),
    Heldout("check_linear_rope_attention", "denominator not causal", b4_linear_full_denominator,
            ("denominator", "causal", "j <= i")),
    Heldout("check_decode_positions", "last repeated", b4_decode_last_repeated, ("same position",)),
    Heldout("check_rope_matrix_2d_blocks", "rows then columns", b4_blocks_rows_then_columns, ("axial",)),
    Heldout("check_slowest_wavelength", "2π / b^(1-2/d)", b4_wavelength_as_angle,
            ("frequency", "wavelength", "invert")),
    Heldout("check_expected_score", "ladder of d/2", b4_expected_ladder_of_pairs, ("d/2", "dimension")),
    Heldout("check_score_asymmetry", "query rotated too", b4_asymmetry_double_rotation, ("2δ", "offset", "twice")),
    Heldout("check_positional_head_query", "target + 1", b4_head_target_plus_one, ("off by one",)),
    Heldout("check_extended_rows", "copy from row 1", b4_rows_copy_from_one, ("reads the table at", "m mod l")),
    Heldout("check_position_parameter_counts", "padding row in part 1", b4_counts_padding_row_in_table,
            ("part 1",)),
    Heldout("check_position_recovery", "floor of 1/o", b4_recovery_floor_then_minus, ("truncat", "floor")),
]


# =========================================================================== batch 5
# Written at about 17:20 UTC, after the last change to the property-based diagnosis of the second pass on
# issue 32, without running any entry first; measured once: the held-out measure of that diagnosis.


def b5_cross_softmax_dim0(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return torch.softmax(scores, dim=0) @ (z @ w_v)


def b5_decay_per_step_exp(initial, lr, weight_decay, steps):
    return initial * math.exp(-lr * weight_decay) ** steps


def b5_alibi_cubed(slopes, length):
    pos = torch.arange(length, dtype=torch.float64)
    return slopes.double()[:, None, None] * -((pos[:, None] - pos[None, :]).abs() ** 3)


def b5_at_floor_positions(slopes, positions):
    p = torch.floor(positions.double())
    return -slopes.double()[:, None, None] * (p[None, :] - p[:, None]).abs()


def b5_gap_rms(layer, x):
    d = layer(x.flip(0)) - layer(x).flip(0)
    return float(d.pow(2).mean().sqrt())


def b5_unrotate_half_exponent(outputs, positions, base=10000.0):
    dim = outputs.shape[-1]
    freqs = base ** (-torch.arange(dim // 2, dtype=torch.float64) / dim)
    return posenc.apply_rope(outputs, -positions, frequencies=freqs)


def b5_linear_exp_features(q, k, v, base=10000.0):
    phi_q, phi_k = q.double().exp(), k.double().exp()
    num = torch.tril(posenc.apply_rope(phi_q, base=base) @ posenc.apply_rope(phi_k, base=base).T)
    return num @ v.double() / torch.tril(phi_q @ phi_k.T).sum(-1, keepdim=True)


def b5_decode_constant(cache_len, num_new):
    return [cache_len + num_new] * num_new


def b5_stream_two_early(cached, window, sinks=4):
    total = cached.shape[-2]
    kept = cached[..., total - window - 2: total - 2, :]
    shift = total - window - sinks
    return torch.cat((cached[..., :sinks, :], posenc.apply_rope(kept, torch.full((window,), -shift))), dim=-2)


def b5_expected_positive_exponent(cross, offsets, base=10000.0):
    pairs = cross.shape[0]
    theta = base ** (torch.arange(pairs, dtype=torch.float64) * 2 / (2 * pairs))
    angles = offsets.double()[:, None] * theta
    c = cross.double()
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b5_asymmetry_zero_minus(query, key, offsets, base=10000.0):
    def s(delta):
        return posenc.apply_rope(key.expand(len(delta), -1), delta, base=base) @ query

    return s(torch.zeros_like(offsets)) - s(-offsets)


def b5_head_negative_twice(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([-2 * target]), base=base)[0]


def b5_wavelength_over_2pi(dim, base):
    return base ** (-(1 - 2 / dim)) / (2 * math.pi)


def b5_rope_positions_minus_one(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) - 1 if positions is None else positions
    return posenc.apply_rope(x, pos, base=base)


def b5_kv_last_axis(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=-1)


def b5_padded_cumsum_dim0(input_ids, padding_idx=1):
    mask = (input_ids != padding_idx).int()
    return (mask.cumsum(0) * mask + padding_idx).long()


HELDOUT_BATCH_5 = [
    Heldout("check_cross_attention", "softmax dim=0", b5_cross_softmax_dim0, ("dim=0", "queries", "each query")),
    Heldout("check_decayed_rows", "exp per step", b5_decay_per_step_exp, ("per-step", "per step", "exp")),
    Heldout("check_alibi_bias_from_slopes", "cubed distance", b5_alibi_cubed, ("power", "linear")),
    Heldout("check_alibi_bias_at_positions", "floored positions", b5_at_floor_positions, ("floor", "integer")),
    Heldout("check_reversal_gap", "root mean square", b5_gap_rms, ("root mean square", "largest")),
    Heldout("check_unrotated_outputs", "exponent ℓ/d", b5_unrotate_half_exponent, ("2ℓ/d", "exponent")),
    Heldout("check_linear_rope_attention", "exp features", b5_linear_exp_features, ("feature map", "elu")),
    Heldout("check_decode_positions", "all cache_len + num_new", b5_decode_constant, ("same position",)),
    Heldout("check_streaming_cache", "two keys early", b5_stream_two_early, ("last", "window keys")),
    Heldout("check_expected_score", "positive exponent", b5_expected_positive_exponent, ("minus sign", "grow")),
    Heldout("check_score_asymmetry", "s(0) - s(-δ)", b5_asymmetry_zero_minus, ("s(0)",)),
    Heldout("check_positional_head_query", "-2 × target", b5_head_negative_twice, ("rotated by",)),
    Heldout("check_slowest_wavelength", "θ / 2π", b5_wavelength_over_2pi, ("invert", "divides")),
    Heldout("check_apply_rope", "default positions from -1", b5_rope_positions_minus_one, ("default positions",)),
    Heldout("check_repeat_kv", "feature axis", b5_kv_last_axis, ("feature axis", "dim=-3")),
    Heldout("check_padded_positions", "cumsum dim=0", b5_padded_cumsum_dim0, ("dim=1", "batch axis")),
]


# =========================================================================== batch 6
# Written at about 16:36 UTC after the last change to the diagnosis of the second pass on issue 32 (including the
# rule that a mistake the answer got right somewhere is never named), without running any entry first; measured
# once. It covers mostly the checkers that batch 5 did not.


def b6_attention_mask_added(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask.to(scores.dtype)
    weights = scores.softmax(-1)
    return weights @ v, weights


def b6_t5_no_cap(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    n = num_buckets // 2 if bidirectional else num_buckets
    offset = (relative_position > 0).long() * n if bidirectional else torch.zeros_like(relative_position)
    distance = relative_position.abs() if bidirectional else (-relative_position).clamp(min=0)
    exact = n // 2
    large = exact + (torch.log(distance.clamp(min=1).float() / exact) / math.log(max_distance / exact)
                     * (n - exact)).long()
    return offset + torch.where(distance < exact, distance, large)


def b6_slopes_base_four(n):
    return torch.tensor([4.0 ** (-8 * (h + 1) / n) for h in range(n)])


def b6_shaw_no_clip(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    return torch.arange(k_len)[None, :] - i + c


def b6_shift_roll(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    rows = [torch.roll(rel_logits[..., r, :], shifts=r + 1, dims=-1) for r in range(lq)]
    return torch.stack(rows, dim=-2)


def b6_recovery_no_round(o):
    return 1.0 / o.double() - 1


def b6_counts_two_projections(n, d):
    return (n * d, n * d, 2 * n * d)


def b6_t2t_interleaved(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)


def b6_rows_clip_at_length(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option == "clip":
        return table[torch.arange(length).clamp(max=table.shape[0] - 2)]
    return reference_extended_rows(table, length, option)


def b6_blocks_half_angles(row, column, dim, base=10000.0):
    from posenc.exercises.rotations import reference_rope_matrix_2d_blocks

    return reference_rope_matrix_2d_blocks(row / 2, column / 2, dim, base)


def b6_pi_divided_twice(dim, base, factor):
    return _th(dim, base) / factor**2


def b6_ntk_base_times_factor(dim, base, factor):
    return _th(dim, base * factor)


def b6_yarn_all_kept(dim, base, factor, train_len, beta_fast, beta_slow):
    return _th(dim, base)


def b6_llama_no_smoothing(dim, base, factor, train_len, low, high):
    inv = _th(dim, base)
    wavelength = 2 * math.pi / inv
    return torch.where(wavelength > train_len / low, inv / factor, inv)


def b6_cross_values_transposed_weights(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return torch.softmax(scores, dim=-1) @ (z @ w_v) * 2


def b6_decay_weight_decay_squared(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay**2) ** steps


def b6_rope_layout_flipped_sign(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    return posenc.apply_rope(x, -pos, base=base, layout="half")


HELDOUT_BATCH_6 = [
    Heldout("check_attention", "mask added as 0/1", b6_attention_mask_added, ("mask", "-inf")),
    Heldout("check_t5_bucket", "no cap", b6_t5_no_cap, ("cap", "last bucket", "n - 1")),
    Heldout("check_alibi_slopes", "base 4", b6_slopes_base_four, ("2^", "ratio", "geometric")),
    Heldout("check_shaw_index", "no clip", b6_shaw_no_clip, ("clip", "[-c, c]", "[0, 2c]")),
    Heldout("check_relative_shift", "roll by r + 1", b6_shift_roll, ("column", "offset", "read")),
    Heldout("check_position_recovery", "not rounded", b6_recovery_no_round, ("round", "nearest")),
    Heldout("check_position_parameter_counts", "two projections", b6_counts_two_projections, ("part 3", "three")),
    Heldout("check_concatenated_sinusoidal", "interleaved", b6_t2t_interleaved, ("interleav", "concatenat")),
    Heldout("check_extended_rows", "clip one row early", b6_rows_clip_at_length, ("last row", "reads the table at")),
    Heldout("check_rope_matrix_2d_blocks", "half angles", b6_blocks_half_angles, ("angle", "half", "position")),
    Heldout("check_pi_frequencies", "divided twice", b6_pi_divided_twice, ("twice", "once too often")),
    Heldout("check_ntk_frequencies", "base times s", b6_ntk_base_times_factor, ("d/(d-2)", "exponent")),
    Heldout("check_yarn_frequencies", "every pair kept", b6_yarn_all_kept, ("original", "never", "kept")),
    Heldout("check_llama3_frequencies", "no smoothing", b6_llama_no_smoothing, ("band", "blend", "smooth")),
    Heldout("check_cross_attention", "output doubled", b6_cross_values_transposed_weights,
            ("2 times", "factor 2", "sum to 1")),
    Heldout("check_decayed_rows", "wd squared", b6_decay_weight_decay_squared, ("per step", "lr wd")),
    Heldout("check_apply_rope", "half layout, wrong way", b6_rope_layout_flipped_sign, ("half", "wrong way")),
]


# =========================================================================== batch 7
# Written at about 16:32 UTC, after every change of the second pass on issue 32, without running any entry first;
# measured once: the honest held-out measure of the final diagnosis (keywords and a careful reading).


def b7_attention_softmax_dim_minus_two(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-2)
    return weights @ v, weights


def b7_cross_scale_by_n(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(z.shape[0])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def b7_decay_steps_halved(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay) ** (steps // 2)


def b7_alibi_sqrt_distance(slopes, length):
    pos = torch.arange(length, dtype=torch.float64)
    return -slopes.double()[:, None, None] * (pos[:, None] - pos[None, :]).abs().sqrt()


def b7_at_positions_ceil(slopes, positions):
    p = positions.double().ceil()
    return -slopes.double()[:, None, None] * (p[None, :] - p[:, None]).abs()


def b7_gap_mean_of_max_per_row(layer, x):
    d = (layer(x.flip(0)) - layer(x).flip(0)).abs()
    return float(d.max(dim=-1).values.mean())


def b7_unrotate_ell_from_one(outputs, positions, base=10000.0):
    dim = outputs.shape[-1]
    freqs = base ** (-torch.arange(2, dim + 2, 2, dtype=torch.float64) / dim)
    return posenc.apply_rope(outputs, -positions, frequencies=freqs)


def b7_linear_plain_elu(q, k, v, base=10000.0):
    phi_q, phi_k = torch.nn.functional.elu(q.double()), torch.nn.functional.elu(k.double())
    num = torch.tril(posenc.apply_rope(phi_q, base=base) @ posenc.apply_rope(phi_k, base=base).T)
    return num @ v.double() / torch.tril(phi_q @ phi_k.T).sum(-1, keepdim=True)


def b7_decode_from_one_past(cache_len, num_new):
    return torch.arange(cache_len + 2, cache_len + 2 + num_new)


def b7_stream_window_late(cached, window, sinks=4):
    total = cached.shape[-2]
    kept = torch.cat((cached[..., total - window + 1:, :], cached[..., -1:, :]), dim=-2)
    moved = posenc.apply_rope(kept, torch.full((window,), -(total - window - sinks)))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b7_expected_ell_from_one(cross, offsets, base=10000.0):
    pairs = cross.shape[0]
    theta = base ** (-2 * torch.arange(1, pairs + 1, dtype=torch.float64) / (2 * pairs))
    angles = offsets.double()[:, None] * theta
    c = cross.double()
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b7_asymmetry_two_minus_one(query, key, offsets, base=10000.0):
    def s(delta):
        return posenc.apply_rope(key.expand(len(delta), -1), delta, base=base) @ query

    return s(2 * offsets) - s(offsets)


def b7_head_three_times(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([3 * target]), base=base)[0]


def b7_wavelength_over_pi(dim, base):
    return math.pi / base ** (-(1 - 2 / dim))


def b7_rope_positions_plus_one_given(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions + 1
    return posenc.apply_rope(x, pos, base=base)


def b7_padded_reversed_count(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    counts = mask.flip(-1).cumsum(-1).flip(-1)
    return counts * mask + padding_idx


def b7_sinusoidal_cos_exponent_shifted(seq_len, dim, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    ell = torch.arange(dim // 2, dtype=torch.float64)
    table = torch.empty(seq_len, dim, dtype=torch.float64)
    table[:, 0::2] = (pos / base ** (2 * ell / dim)).sin()
    table[:, 1::2] = (pos / base ** (2 * (ell + 1) / dim)).cos()
    return table


HELDOUT_BATCH_7 = [
    Heldout("check_attention", "softmax over the queries", b7_attention_softmax_dim_minus_two,
            ("sum to 1", "sums to", "dim=-1", "over the keys")),
    Heldout("check_cross_attention", "scale by sqrt(n)", b7_cross_scale_by_n, ("sqrt(d_k)", "scale")),
    Heldout("check_decayed_rows", "half the steps", b7_decay_steps_halved, ("exponent", "steps", "T/2")),
    Heldout("check_alibi_bias_from_slopes", "square root of the distance", b7_alibi_sqrt_distance,
            ("power", "linear")),
    Heldout("check_alibi_bias_at_positions", "ceil positions", b7_at_positions_ceil, ("ceil", "integer")),
    Heldout("check_reversal_gap", "mean of row maxima", b7_gap_mean_of_max_per_row, ("largest", "max")),
    Heldout("check_unrotated_outputs", "ℓ from 1", b7_unrotate_ell_from_one, ("from 1", "ℓ")),
    Heldout("check_linear_rope_attention", "elu without + 1", b7_linear_plain_elu, ("feature map", "+ 1")),
    Heldout("check_decode_positions", "start two late", b7_decode_from_one_past, ("cache_len", "start")),
    Heldout("check_streaming_cache", "last key twice", b7_stream_window_late, ("last", "window")),
    Heldout("check_expected_score", "ℓ from 1", b7_expected_ell_from_one, ("from 1",)),
    Heldout("check_score_asymmetry", "s(2δ) - s(δ)", b7_asymmetry_two_minus_one, ("s(2δ)", "s(-δ)")),
    Heldout("check_positional_head_query", "3 × target", b7_head_three_times, ("rotated by",)),
    Heldout("check_slowest_wavelength", "π not 2π, multiplied", b7_wavelength_over_pi, ("factor 2", "2π")),
    Heldout("check_apply_rope", "given positions + 1", b7_rope_positions_plus_one_given, ("+1", "shifted")),
    Heldout("check_padded_positions", "counted from the end", b7_padded_reversed_count, ("order", "revers", "end")),
    Heldout("check_sinusoidal", "cos at the next frequency", b7_sinusoidal_cos_exponent_shifted,
            ("different frequencies", "share")),
]


# =========================================================================== batch 8
# Written at about 16:40 UTC, after the generalisation that followed batch 7 (the last change to the diagnosis),
# without running any entry first; measured once: the honest held-out measure of the final checkers.


def b8_attention_weights_transposed(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights.transpose(-2, -1)


def b8_cross_temperature_dk(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / w_k.shape[1] ** 0.25
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def b8_decay_lr_squared(initial, lr, weight_decay, steps):
    return initial * (1 - lr * lr * weight_decay) ** steps


def b8_alibi_from_slopes_distance_plus_one(slopes, length):
    pos = torch.arange(length, dtype=torch.float64)
    offsets = pos[None, :] - pos[:, None]
    return slopes.double()[:, None, None] * torch.where(offsets < 0, offsets - 1, offsets)


def b8_at_positions_offsets_from_first(slopes, positions):
    p = positions.double() - positions.double()[0]
    idx = torch.arange(len(p), dtype=torch.float64)
    return -slopes.double()[:, None, None] * (p[None, :] - idx[:, None]).abs()


def b8_gap_median(layer, x):
    return float((layer(x.flip(0)) - layer(x).flip(0)).abs().median())


def b8_unrotate_twice(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -2 * positions, base=base)


def b8_linear_sigmoid_features(q, k, v, base=10000.0):
    phi_q, phi_k = torch.sigmoid(q.double()), torch.sigmoid(k.double())
    num = torch.tril(posenc.apply_rope(phi_q, base=base) @ posenc.apply_rope(phi_k, base=base).T)
    return num @ v.double() / torch.tril(phi_q @ phi_k.T).sum(-1, keepdim=True)


def b8_decode_reversed(cache_len, num_new):
    return torch.arange(cache_len + num_new - 1, cache_len - 1, -1)


def b8_stream_sinks_from_end(cached, window, sinks=4):
    total = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., total - window:, :], torch.full((window,), -(total - window - sinks)))
    return torch.cat((cached[..., sinks:2 * sinks, :], moved), dim=-2)


def b8_expected_sin_minus(cross, offsets, base=10000.0):
    pairs = cross.shape[0]
    theta = base ** (-2 * torch.arange(pairs, dtype=torch.float64) / (2 * pairs))
    angles = offsets.double()[:, None] * theta
    c = cross.double()
    return angles.cos() @ (c[:, 0, 0] - c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b8_asymmetry_halved_offsets(query, key, offsets, base=10000.0):
    def s(delta):
        return posenc.apply_rope(key.expand(len(delta), -1), delta, base=base) @ query

    return s(offsets / 2) - s(-offsets / 2)


def b8_wavelength_log(dim, base):
    return 2 * math.pi * math.exp(1 - 2 / dim) * math.log(base)


def b8_rope_positions_reversed(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    return posenc.apply_rope(x, pos.flip(0), base=base)


def b8_kv_repeat_tile(kv, num_heads):
    return kv.repeat(*([1] * (kv.dim() - 3)), num_heads // kv.shape[-3], 1, 1)


HELDOUT_BATCH_8 = [
    Heldout("check_attention", "weights transposed", b8_attention_weights_transposed, ("transpos", "(..., lq, lk)")),
    Heldout("check_cross_attention", "d_k^(1/4)", b8_cross_temperature_dk, ("divided by", "sqrt(d_k)")),
    Heldout("check_decayed_rows", "lr squared", b8_decay_lr_squared, ("per step", "1 - lr wd")),
    Heldout("check_alibi_bias_from_slopes", "distance + 1 before the query", b8_alibi_from_slopes_distance_plus_one,
            ("distance", "offset", "j - i")),
    Heldout("check_alibi_bias_at_positions", "indices against positions", b8_at_positions_offsets_from_first,
            ("position",)),
    Heldout("check_reversal_gap", "median", b8_gap_median, ("median", "largest")),
    Heldout("check_unrotated_outputs", "turned back twice", b8_unrotate_twice, ("twice", "2", "position")),
    Heldout("check_linear_rope_attention", "sigmoid features", b8_linear_sigmoid_features, ("feature map", "elu")),
    Heldout("check_decode_positions", "reversed", b8_decode_reversed, ("order", "revers", "increas")),
    Heldout("check_streaming_cache", "sinks after the first", b8_stream_sinks_from_end, ("sink",)),
    Heldout("check_expected_score", "trace with a minus", b8_expected_sin_minus, ("trace", "c11 + c22", "C11 + C22")),
    Heldout("check_score_asymmetry", "half offsets", b8_asymmetry_halved_offsets, ("δ/2", "half")),
    Heldout("check_slowest_wavelength", "log instead of power", b8_wavelength_log, ("b^(1 - 2/d)", "power")),
    Heldout("check_apply_rope", "positions reversed", b8_rope_positions_reversed, ("position", "revers")),
    Heldout("check_repeat_kv", "tile instead of interleave", b8_kv_repeat_tile, ("interleav", "consecutive", "block")),
]


# =========================================================================== batch 9
# Written at about 19:05 UTC by a new session, from the exercises' statements and reference functions only (no
# checker's mistake list or message read first), without running any entry; measured once.


def _b9_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b9_attention_scale_by_d(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def b9_attention_mask_after_softmax(q, k, v, mask=None):
    weights = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(-1)
    if mask is not None:
        weights = weights * mask
    return weights @ v, weights


def b9_cross_scale_query_input_width(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_q.shape[0])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def b9_cross_values_unprojected(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return torch.softmax(scores, dim=-1) @ z


def b9_decay_exponential(initial, lr, weight_decay, steps):
    return initial * math.exp(-lr * weight_decay * steps)


def b9_decay_without_lr(initial, lr, weight_decay, steps):
    return initial * (1 - weight_decay) ** steps


def b9_decay_linear(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay * steps)


def b9_alibi_from_slopes_i_minus_j(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return slopes[:, None, None] * (pos[:, None] - pos[None, :])


def b9_alibi_from_slopes_flat_slopes(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return slopes[:, None] * (pos[None, :] - pos[:, None])


def b9_at_positions_no_minus(slopes, positions):
    p = positions.double()
    return slopes.double()[:, None, None] * (p[None, :] - p[:, None]).abs()


def b9_at_positions_no_abs(slopes, positions):
    p = positions.double()
    return -slopes.double()[:, None, None] * (p[None, :] - p[:, None])


def b9_at_positions_normalised(slopes, positions):
    p = positions.double() / positions.double().max()
    return -slopes.double()[:, None, None] * (p[None, :] - p[:, None]).abs()


def b9_gap_output_not_reversed(layer, x):
    return (layer(x.flip(0)) - layer(x)).abs().max().item()


def b9_gap_features_reversed(layer, x):
    return (layer(x.flip(-1)) - layer(x).flip(-1)).abs().max().item()


def b9_gap_sum(layer, x):
    return (layer(x.flip(0)) - layer(x).flip(0)).abs().sum().item()


def b9_unrotate_forward(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, positions, base=base)


def b9_unrotate_half_layout(outputs, positions, base=10000.0):
    d = outputs.shape[-1]
    angles = -positions.double()[:, None] * _b9_theta(d, base)
    cos, sin = torch.cat((angles.cos(), angles.cos()), -1), torch.cat((angles.sin(), angles.sin()), -1)
    o = outputs.double()
    rotated = torch.cat((-o[..., d // 2:], o[..., : d // 2]), -1)
    return (o * cos + rotated * sin).to(outputs.dtype)


def b9_unrotate_arange(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -torch.arange(outputs.shape[-2]), base=base)


def _b9_elu1(x):
    return torch.nn.functional.elu(x.double()) + 1


def b9_linear_rope_in_denominator(q, k, v, base=10000.0):
    rq, rk = posenc.apply_rope(_b9_elu1(q), base=base), posenc.apply_rope(_b9_elu1(k), base=base)
    num = torch.tril(rq @ rk.T)
    return num @ v.double() / num.sum(-1, keepdim=True)


def b9_linear_not_causal(q, k, v, base=10000.0):
    pq, pk = _b9_elu1(q), _b9_elu1(k)
    num = posenc.apply_rope(pq, base=base) @ posenc.apply_rope(pk, base=base).T
    return num @ v.double() / (pq @ pk.T).sum(-1, keepdim=True)


def b9_linear_rope_before_features(q, k, v, base=10000.0):
    rq, rk = _b9_elu1(posenc.apply_rope(q, base=base)), _b9_elu1(posenc.apply_rope(k, base=base))
    pq, pk = _b9_elu1(q), _b9_elu1(k)
    return torch.tril(rq @ rk.T) @ v.double() / torch.tril(pq @ pk.T).sum(-1, keepdim=True)


def b9_decode_ignores_cache(cache_len, num_new):
    return torch.arange(num_new)


def b9_decode_one_too_many(cache_len, num_new):
    return torch.arange(cache_len, cache_len + num_new + 1)


def b9_decode_before_cache_end(cache_len, num_new):
    return torch.arange(cache_len - num_new, cache_len)


def b9_stream_shift_without_sinks(cached, window, sinks=4):
    total = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., total - window:, :], torch.full((window,), -(total - window)))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b9_stream_rotated_further(cached, window, sinks=4):
    total = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., total - window:, :], torch.full((window,), total - window - sinks))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b9_stream_four_sinks_always(cached, window, sinks=4):
    total = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., total - window:, :], torch.full((window,), -(total - window - 4)))
    return torch.cat((cached[..., :4, :], moved), dim=-2)


def b9_expected_mean_over_pairs(cross, offsets, base=10000.0):
    pairs = cross.shape[0]
    angles = offsets.double()[:, None] * _b9_theta(2 * pairs, base)
    c = cross.double()
    return (angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])) / pairs


def b9_expected_sine_transposed(cross, offsets, base=10000.0):
    pairs = cross.shape[0]
    angles = offsets.double()[:, None] * _b9_theta(2 * pairs, base)
    c = cross.double()
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 0, 1] - c[:, 1, 0])


def b9_asymmetry_positive(query, key, offsets, base=10000.0):
    theta = _b9_theta(query.shape[-1], base)
    q, k = query.double(), key.double()
    imag = q[0::2] * k[1::2] - q[1::2] * k[0::2]
    return 2 * torch.sin(offsets.double()[:, None] * theta) @ imag


def b9_asymmetry_query_rotated(query, key, offsets, base=10000.0):
    def s(delta):
        return posenc.apply_rope(query.double().expand(len(delta), -1), delta, base=base) @ key.double()

    return s(offsets) - s(-offsets)


def b9_head_minus_target(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([-target]), base=base)[0]


def b9_head_key_itself(key, target, base=10000.0):
    return key.clone()


def b9_wavelength_base_only(dim, base):
    return 2 * math.pi * base


def b9_wavelength_two_over_d(dim, base):
    return 2 * math.pi * base ** (2 / dim)


def b9_wavelength_no_two_pi(dim, base):
    return base ** (1 - 2 / dim)


def b9_rope_cos_twice(x, positions=None, base=10000.0):
    n, d = x.shape[-2], x.shape[-1]
    pos = torch.arange(n) if positions is None else positions
    angles = pos.double()[:, None] * _b9_theta(d, base)
    cos = angles.cos().repeat_interleave(2, -1)
    xd = x.double()
    rotated = torch.stack((-xd[..., 1::2], xd[..., 0::2]), -1).flatten(-2)
    return (xd * cos + rotated * cos).to(x.dtype)


def b9_rope_first_axis_positions(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[0]) if positions is None else positions
    return posenc.apply_rope(x, pos, base=base)


def b9_kv_groups_from_first_axis(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[0], dim=-3)


def b9_kv_index_by_h_kv(kv, num_heads):
    index = torch.arange(num_heads) // kv.shape[-3]
    return kv[..., index.clamp(max=kv.shape[-3] - 1), :, :]


def b9_padded_no_offset(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return torch.cumsum(mask, dim=1) * mask


def b9_padded_greater_than(input_ids, padding_idx=1):
    mask = (input_ids > padding_idx).long()
    return torch.cumsum(mask, dim=1) * mask + padding_idx


def b9_sinusoidal_from_one(seq_len, dim, base=10000.0):
    pos = torch.arange(1, seq_len + 1, dtype=torch.float64)[:, None]
    angles = pos * _b9_theta(dim, base)
    table = torch.zeros(seq_len, dim, dtype=torch.float64)
    table[:, 0::2], table[:, 1::2] = angles.sin(), angles.cos()
    return table.float()


def b9_sinusoidal_concatenated(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b9_theta(dim, base)
    return torch.cat((angles.sin(), angles.cos()), -1).float()


def b9_shaw_rows_from_one(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return (j - i).clamp(-c, c) + c + 1


def b9_shift_one_column_right(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    out = torch.zeros_like(rel_logits)
    for r in range(lq):
        for j in range(lk):
            col = min(j + lq - r, lk - 1)
            out[..., r, j] = rel_logits[..., r, col]
    return out


def b9_shift_square_loop(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    out = torch.zeros_like(rel_logits)
    for r in range(lq):
        for j in range(lk):
            col = j + lk - 1 - r
            if 0 <= col < lk:
                out[..., r, j] = rel_logits[..., r, col]
    return out


def b9_t5_bidirectional_not_halved(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    n = -relative_position if not bidirectional else relative_position
    ret = torch.zeros_like(relative_position)
    if bidirectional:
        ret = ret + (n > 0).long() * (num_buckets // 2)
        n = n.abs()
    else:
        n = n.clamp(min=0)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    large = max_exact + (torch.log(n.float().clamp(min=1) / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).long()
    large = large.clamp(max=num_buckets - 1)
    return ret + torch.where(is_small, n, large)


def b9_t5_sign_flipped(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return posenc.t5_relative_position_bucket(-relative_position, bidirectional=bidirectional,
                                              num_buckets=num_buckets, max_distance=max_distance)


def b9_slopes_from_zero(n):
    return [2 ** (-8 * h / n) for h in range(n)]


def b9_slopes_no_power_of_two_rule(n):
    return [2 ** (-8 * (h + 1) / n) for h in range(n)]


def b9_rope2d_columns_unrotated(x, rows, columns, base=10000.0):
    d = x.shape[-1]
    first = posenc.apply_rope(x[..., : d // 2], rows, base=base)
    return torch.cat((first, x[..., d // 2:]), -1)


def b9_blocks_two_l_over_d(row, column, dim, base=10000.0):
    theta = base ** (-2 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    blocks = []
    for f in theta.tolist():
        for p in (row, column):
            a = torch.tensor(p * f, dtype=torch.float64)
            blocks.append(torch.stack([torch.stack([a.cos(), -a.sin()]), torch.stack([a.sin(), a.cos()])]))
    return torch.block_diag(*blocks)


def b9_blocks_transposed(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    blocks = []
    for f in theta.tolist():
        for p in (row, column):
            a = torch.tensor(p * f, dtype=torch.float64)
            blocks.append(torch.stack([torch.stack([a.cos(), a.sin()]), torch.stack([-a.sin(), a.cos()])]))
    return torch.block_diag(*blocks)


def b9_recovery_no_minus_one(o):
    return (1.0 / o.double()).round().long()


def b9_recovery_truncated(o):
    return (1.0 / o.double() - 1.0).long()


def b9_counts_embedding_map(positions, width):
    return (positions * width, width * width, 3 * width * width)


def b9_concat_vaswani_ladder(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b9_theta(dim, base)
    return torch.cat((angles.sin(), angles.cos()), -1)


def b9_concat_cos_first(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.cos(), angles.sin()), -1)


def b9_rows_interpolate_endpoint(table, length, option):
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1)]
    if option == "copy":
        return table[torch.arange(length) % rows]
    where = torch.arange(length, dtype=torch.float64) * rows / length
    low = where.floor().long().clamp(max=rows - 2)
    frac = (where - low).to(table.dtype)[:, None]
    return (1 - frac) * table[low] + frac * table[(low + 1).clamp(max=rows - 1)]


def b9_rows_copy_period_short(table, length, option):
    rows = table.shape[0]
    if option == "copy":
        return table[torch.arange(length) % (rows - 1)]
    from posenc.exercises.extrapolation import reference_extended_rows

    return reference_extended_rows(table, length, option)


def b9_pi_factor_in_exponent(dim, base, factor):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim / factor)


def b9_pi_every_coordinate(dim, base, factor):
    return base ** (-torch.arange(dim, dtype=torch.float64) / dim) / factor


def b9_ntk_base_to_the_factor(dim, base, factor):
    return _b9_theta(dim, base ** factor)


def b9_ntk_exponent_d_over_d_minus_1(dim, base, factor):
    return _b9_theta(dim, base * factor ** (dim / (dim - 1)))


def b9_dynamic_ratio_inverted(dim, base, factor, train_len, seq_len):
    length = max(seq_len, train_len)
    scale = factor * train_len / length - (factor - 1)
    return _b9_theta(dim, base * abs(scale) ** (dim / (dim - 2)))


def b9_dynamic_no_exponent(dim, base, factor, train_len, seq_len):
    length = max(seq_len, train_len)
    return _b9_theta(dim, base * (factor * length / train_len - (factor - 1)))


def _b9_yarn(dim, base, factor, train_len, beta_fast, beta_slow, correction):
    low = max(math.floor(correction(beta_fast)), 0)
    high = min(math.ceil(correction(beta_slow)), dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    inv = _b9_theta(dim, base)
    return inv / factor * ramp + inv * (1 - ramp)


def b9_yarn_log10_base(dim, base, factor, train_len, beta_fast, beta_slow):
    return _b9_yarn(dim, base, factor, train_len, beta_fast, beta_slow,
                    lambda r: dim * math.log(train_len / (r * 2 * math.pi)) / (2 * math.log10(base)))


def b9_yarn_half_dim_edges(dim, base, factor, train_len, beta_fast, beta_slow):
    return _b9_yarn(dim, base, factor, train_len, beta_fast, beta_slow,
                    lambda r: (dim / 2) * math.log(train_len / (r * 2 * math.pi)) / (2 * math.log(base)))


def b9_llama_wavelength_without_two_pi(dim, base, factor, train_len, low, high):
    inv = _b9_theta(dim, base)
    smooth = ((train_len * inv - low) / (high - low)).clamp(0, 1)
    return (1 - smooth) * inv / factor + smooth * inv


def b9_llama_ratio_inverted(dim, base, factor, train_len, low, high):
    inv = _b9_theta(dim, base)
    wavelength = 2 * math.pi / inv
    smooth = ((wavelength / train_len - low) / (high - low)).clamp(0, 1)
    return (1 - smooth) * inv / factor + smooth * inv


HELDOUT_BATCH_9 = [
    Heldout("check_attention", "divided by d", b9_attention_scale_by_d, ("sqrt", "√")),
    Heldout("check_attention", "mask after the softmax", b9_attention_mask_after_softmax,
            ("after the softmax", "sum to 1", "renormal", "before the softmax")),
    Heldout("check_cross_attention", "scaled by the query input width", b9_cross_scale_query_input_width,
            ("d_k", "width of the keys", "key width")),
    Heldout("check_cross_attention", "values not projected", b9_cross_values_unprojected,
            ("w_v", "value projection")),
    Heldout("check_decayed_rows", "exp(-lr wd T)", b9_decay_exponential, ("exp", "continuous", "approximat")),
    Heldout("check_decayed_rows", "lr left out", b9_decay_without_lr,
            ("learning rate", "lr is missing", "without lr", "lr missing", "forgot")),
    Heldout("check_decayed_rows", "linear, not compounded", b9_decay_linear,
            ("linear", "compound", "power", "(1 - lr wd)^t")),
    Heldout("check_alibi_bias_from_slopes", "i - j", b9_alibi_from_slopes_i_minus_j, ("sign", "i - j")),
    Heldout("check_alibi_bias_from_slopes", "slopes[:, None]", b9_alibi_from_slopes_flat_slopes,
            ("[:, none, none]", "size-1 axis", "broadcast", "head axis")),
    Heldout("check_alibi_bias_at_positions", "no minus", b9_at_positions_no_minus, ("sign", "minus")),
    Heldout("check_alibi_bias_at_positions", "no absolute value", b9_at_positions_no_abs,
            ("absolute", "abs", "symmetric", "j > i", "sign")),
    Heldout("check_alibi_bias_at_positions", "positions normalised", b9_at_positions_normalised,
            ("normalis", "normaliz", "divided", "scaled")),
    Heldout("check_reversal_gap", "output not reversed", b9_gap_output_not_reversed,
            ("output", "reverse both", "layer(x) reversed")),
    Heldout("check_reversal_gap", "features reversed", b9_gap_features_reversed,
            ("axis", "dim 0", "features")),
    Heldout("check_reversal_gap", "sum not max", b9_gap_sum, ("sum", "largest", "max")),
    Heldout("check_unrotated_outputs", "rotated forward", b9_unrotate_forward,
            ("forward", "direction", "r_i^t", "transpose", "-positions", "wrong way")),
    Heldout("check_unrotated_outputs", "half layout", b9_unrotate_half_layout, ("layout", "half", "interleav")),
    Heldout("check_unrotated_outputs", "positions ignored", b9_unrotate_arange,
            ("ignore", "0..n-1", "arange", "positions given", "positions argument")),
    Heldout("check_linear_rope_attention", "RoPE in the denominator", b9_linear_rope_in_denominator,
            ("denominator",)),
    Heldout("check_linear_rope_attention", "not causal", b9_linear_not_causal,
            ("causal", "future", "tril", "mask")),
    Heldout("check_linear_rope_attention", "RoPE before the feature map", b9_linear_rope_before_features,
            ("before", "feature map", "order")),
    Heldout("check_decode_positions", "cache ignored", b9_decode_ignores_cache, ("cache_len", "cache")),
    Heldout("check_decode_positions", "one too many", b9_decode_one_too_many,
            ("one too many", "num_new", "length", "count")),
    Heldout("check_decode_positions", "the last cached positions", b9_decode_before_cache_end,
            ("before", "cache_len", "start", "overlap")),
    Heldout("check_streaming_cache", "shift forgets the sinks", b9_stream_shift_without_sinks,
            ("sink", "shift")),
    Heldout("check_streaming_cache", "rotated further", b9_stream_rotated_further,
            ("direction", "sign", "back", "forward")),
    Heldout("check_streaming_cache", "four sinks always", b9_stream_four_sinks_always,
            ("sinks argument", "ignor", "sinks=")),
    Heldout("check_expected_score", "mean over pairs", b9_expected_mean_over_pairs,
            ("mean", "average", "sum over", "factor")),
    Heldout("check_expected_score", "sine term transposed", b9_expected_sine_transposed,
            ("sine", "c21 - c12", "transpos", "sign")),
    Heldout("check_score_asymmetry", "sign of the sum", b9_asymmetry_positive, ("sign", "opposite")),
    Heldout("check_score_asymmetry", "query rotated", b9_asymmetry_query_rotated,
            ("sign", "query", "opposite")),
    Heldout("check_positional_head_query", "rotated by -target", b9_head_minus_target,
            ("sign", "-target", "direction", "opposite")),
    Heldout("check_positional_head_query", "key returned", b9_head_key_itself,
            ("target", "rotate", "δ = 0")),
    Heldout("check_slowest_wavelength", "2π b", b9_wavelength_base_only, ("1 - 2/d", "exponent", "last pair")),
    Heldout("check_slowest_wavelength", "b^(2/d)", b9_wavelength_two_over_d, ("1 - 2/d", "exponent")),
    Heldout("check_slowest_wavelength", "no 2π", b9_wavelength_no_two_pi, ("2π",)),
    Heldout("check_apply_rope", "cos twice", b9_rope_cos_twice, ("sin", "cos")),
    Heldout("check_apply_rope", "positions from the first axis", b9_rope_first_axis_positions,
            ("shape[-2]", "axis", "batch", "shape[0]")),
    Heldout("check_repeat_kv", "groups from the first axis", b9_kv_groups_from_first_axis,
            ("shape[-3]", "axis", "batch", "h_kv")),
    Heldout("check_repeat_kv", "index // h_kv", b9_kv_index_by_h_kv, ("group", "h / h_kv", "//")),
    Heldout("check_padded_positions", "no padding_idx offset", b9_padded_no_offset,
            ("padding_idx", "offset", "start")),
    Heldout("check_padded_positions", "ids > padding_idx", b9_padded_greater_than,
            ("!=", "ne(", "smaller", "token id", "real token")),
    Heldout("check_sinusoidal", "positions from 1", b9_sinusoidal_from_one,
            ("position 0", "from 1", "start", "off by one")),
    Heldout("check_sinusoidal", "sines then cosines", b9_sinusoidal_concatenated,
            ("interleav", "concatenat", "sines then cosines", "layout")),
    Heldout("check_shaw_index", "rows from 1", b9_shaw_rows_from_one, ("off by one", "+ c", "c + 1", "from 1")),
    Heldout("check_relative_shift", "one column to the right", b9_shift_one_column_right,
            ("one column", "off by one", "δ + 1", "δ - 1", "shifted")),
    Heldout("check_relative_shift", "Lq == Lk assumed", b9_shift_square_loop,
            ("lq == lk", "memory", "square", "lk - lq")),
    Heldout("check_t5_bucket", "each direction not halved", b9_t5_bidirectional_not_halved,
            ("half", "num_buckets // 2", "each direction")),
    Heldout("check_t5_bucket", "relative position negated", b9_t5_sign_flipped,
            ("sign", "direction", "memory_position - query_position", "future", "past")),
    Heldout("check_alibi_slopes", "h from 0", b9_slopes_from_zero, ("from 1", "h = 1", "start", "first slope")),
    Heldout("check_alibi_slopes", "no power-of-two rule", b9_slopes_no_power_of_two_rule,
            ("power of two", "closest power", "not a power")),
    Heldout("check_apply_rope_2d", "columns not rotated", b9_rope2d_columns_unrotated,
            ("column", "second half", "not rotated")),
    Heldout("check_rope_matrix_2d_blocks", "θ = b^(-2ℓ/d)", b9_blocks_two_l_over_d,
            ("4ℓ/d", "d/4", "d/2")),
    Heldout("check_rope_matrix_2d_blocks", "blocks transposed", b9_blocks_transposed,
            ("transpose", "direction", "sign", "wrong way")),
    Heldout("check_position_recovery", "no - 1", b9_recovery_no_minus_one, ("- 1", "off by one", "i + 1")),
    Heldout("check_position_recovery", "truncated", b9_recovery_truncated, ("round", "truncat", "floor", "nearest")),
    Heldout("check_position_parameter_counts", "the d × d map", b9_counts_embedding_map,
            ("one-hot", "d²", "d × d", "d*d", "n × d")),
    Heldout("check_concatenated_sinusoidal", "Vaswani's ladder", b9_concat_vaswani_ladder,
            ("d/2 - 1", "half - 1", "timescale")),
    Heldout("check_concatenated_sinusoidal", "cosines first", b9_concat_cos_first,
            ("cos", "order", "swapped")),
    Heldout("check_extended_rows", "interpolate at m L / length", b9_rows_interpolate_endpoint,
            ("l - 1", "(l - 1)/(length - 1)", "endpoint", "corner", "last row")),
    Heldout("check_extended_rows", "copy with period L - 1", b9_rows_copy_period_short,
            ("mod", "period", "l - 1", "modulo")),
    Heldout("check_pi_frequencies", "factor in the exponent", b9_pi_factor_in_exponent,
            ("exponent", "divide the frequencies")),
    Heldout("check_pi_frequencies", "one per coordinate", b9_pi_every_coordinate,
            ("d/2", "one per pair", "pairs", "step 2")),
    Heldout("check_ntk_frequencies", "base^factor", b9_ntk_base_to_the_factor,
            ("s^(d/(d-2))", "factor^(d/(d-2))", "multipl", "power of the base")),
    Heldout("check_ntk_frequencies", "exponent d/(d-1)", b9_ntk_exponent_d_over_d_minus_1,
            ("d/(d - 2)", "d/(d-2)", "exponent")),
    Heldout("check_dynamic_ntk_frequencies", "ratio inverted", b9_dynamic_ratio_inverted,
            ("ratio", "invert", "seq_len /", "l'/l")),
    Heldout("check_dynamic_ntk_frequencies", "no d/(d-2) exponent", b9_dynamic_no_exponent,
            ("d/(d - 2)", "d/(d-2)", "exponent")),
    Heldout("check_yarn_frequencies", "log10 of the base", b9_yarn_log10_base,
            ("log10", "logarithm", "natural log", "edge")),
    Heldout("check_yarn_frequencies", "d/2 in the band edges", b9_yarn_half_dim_edges,
            ("d/2", "edge", "band")),
    Heldout("check_llama3_frequencies", "wavelength without 2π", b9_llama_wavelength_without_two_pi,
            ("2π",)),
    Heldout("check_llama3_frequencies", "ratio inverted", b9_llama_ratio_inverted,
            ("l/λ", "ratio", "invert", "train_len / wavelength")),
]


# =========================================================================== batch 10
# Written at about 19:10 UTC, after the generalisation that followed batch 9, without running any entry; measured once.


def b10_attention_mask_minus_large_after_scale(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = (scores / q.shape[-1]).softmax(-1)
    return weights @ v, weights


def b10_cross_keys_from_queries(y, z, w_q, w_k, w_v):
    scores = (z @ w_k) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return torch.softmax(scores, dim=-1)[: y.shape[0]] @ (z @ w_v)


def b10_decay_divided(initial, lr, weight_decay, steps):
    return initial / (1 + lr * weight_decay) ** steps


def b10_alibi_from_slopes_reciprocal(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return (1 / slopes)[:, None, None] * (pos[None, :] - pos[:, None])


def b10_at_positions_sorted(slopes, positions):
    p = positions.double().sort().values
    return -slopes.double()[:, None, None] * (p[None, :] - p[:, None]).abs()


def b10_decode_linspace(cache_len, num_new):
    return torch.linspace(cache_len, cache_len + num_new, num_new).long()


def b10_stream_window_not_moved(cached, window, sinks=4):
    return torch.cat((cached[..., :sinks, :], cached[..., -window:, :]), dim=-2)


def b10_asymmetry_only_sum_of_products(query, key, offsets, base=10000.0):
    theta = base ** (-torch.arange(0, query.shape[-1], 2, dtype=torch.float64) / query.shape[-1])
    q, k = query.double(), key.double()
    imag = q[0::2] * k[1::2] + q[1::2] * k[0::2]
    return -2 * torch.sin(offsets.double()[:, None] * theta) @ imag


def b10_wavelength_frequency_not_wavelength(dim, base):
    return base ** (-(1 - 2 / dim))


def b10_kv_expand_wrong_axis(kv, num_heads):
    groups = num_heads // kv.shape[-3]
    return kv.unsqueeze(-2).expand(*kv.shape[:-1], groups, kv.shape[-1]).reshape(*kv.shape[:-3], num_heads,
                                                                                 kv.shape[-2], kv.shape[-1])


def b10_slopes_base_e(n):
    return [math.exp(-8 * (h + 1) / n) for h in range(n)]


def b10_rows_clip_first_row(table, length, option):
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1) * (torch.arange(length) < rows)]
    from posenc.exercises.extrapolation import reference_extended_rows

    return reference_extended_rows(table, length, option)


def b10_llama_no_division(dim, base, factor, train_len, low, high):
    inv = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    smooth = ((train_len * inv / (2 * math.pi) - low) / (high - low)).clamp(0, 1)
    return (1 - smooth) * inv * factor + smooth * inv


HELDOUT_BATCH_10 = [
    Heldout("check_attention", "divided by d after masking", b10_attention_mask_minus_large_after_scale,
            ("sqrt", "√")),
    Heldout("check_cross_attention", "queries from z", b10_cross_keys_from_queries,
            ("y", "queries", "w_q")),
    Heldout("check_decayed_rows", "divided by (1 + lr wd)^T", b10_decay_divided, ("divid", "1 + lr wd", "1 - lr wd")),
    Heldout("check_alibi_bias_from_slopes", "1/m", b10_alibi_from_slopes_reciprocal, ("1/m", "reciprocal", "invert")),
    Heldout("check_alibi_bias_at_positions", "positions sorted", b10_at_positions_sorted,
            ("sort", "order")),
    Heldout("check_decode_positions", "linspace", b10_decode_linspace, ("linspace", "step", "spacing", "end")),
    Heldout("check_streaming_cache", "window not moved", b10_stream_window_not_moved,
            ("not rotated", "not moved", "rotate", "rotation")),
    Heldout("check_score_asymmetry", "plus in the cross term", b10_asymmetry_only_sum_of_products,
            ("sign", "minus", "imag", "cross product", "q_{2ℓ} k_{2ℓ+1} - q_{2ℓ+1} k_{2ℓ}")),
    Heldout("check_slowest_wavelength", "the frequency, not the wavelength", b10_wavelength_frequency_not_wavelength,
            ("frequency", "2π/θ", "λ = 2π/θ")),
    Heldout("check_repeat_kv", "expanded along L", b10_kv_expand_wrong_axis, ("axis", "interleav", "-3")),
    Heldout("check_alibi_slopes", "e instead of 2", b10_slopes_base_e, ("base 2", "2^", "e^", "exp")),
    Heldout("check_extended_rows", "clip sends far positions to row 0", b10_rows_clip_first_row,
            ("last row", "row 0", "first row", "L - 1")),
    Heldout("check_llama3_frequencies", "multiplied by the factor", b10_llama_no_division,
            ("divid", "/ s", "θ_ℓ / s", "times s", "multipl")),
]


# =========================================================================== batch 11
# Written at about 19:20 UTC, after the generalisation that followed batch 10 (an argument-use probe among it), from
# the exercises' statements only, without running any entry; measured once.


def _b11_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b11_attention_returns_swapped(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights, weights @ v


def b11_attention_scale_by_value_width(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def b11_cross_keys_from_y(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (y @ w_k).T / math.sqrt(w_k.shape[1])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)[: y.shape[0]]


def b11_decay_half(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay / 2) ** steps


def b11_alibi_slope_times_head(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    heads = torch.arange(1, len(slopes) + 1, dtype=slopes.dtype)
    return (slopes * heads)[:, None, None] * (pos[None, :] - pos[:, None])


def b11_at_slopes_squared(slopes, positions):
    p = positions.double()
    return -(slopes.double() ** 2)[:, None, None] * (p[None, :] - p[:, None]).abs()


def b11_gap_per_feature(layer, x):
    return (layer(x.flip(0)) - layer(x).flip(0)).abs().max(0).values


def b11_unrotate_base_ignored(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -positions)


def b11_linear_relu_plus_one(q, k, v, base=10000.0):
    pq, pk = torch.relu(q.double()) + 1, torch.relu(k.double()) + 1
    num = torch.tril(posenc.apply_rope(pq, base=base) @ posenc.apply_rope(pk, base=base).T)
    return num @ v.double() / torch.tril(pq @ pk.T).sum(-1, keepdim=True)


def b11_linear_strictly_causal_denominator(q, k, v, base=10000.0):
    pq, pk = torch.nn.functional.elu(q.double()) + 1, torch.nn.functional.elu(k.double()) + 1
    num = torch.tril(posenc.apply_rope(pq, base=base) @ posenc.apply_rope(pk, base=base).T)
    den = torch.tril(pq @ pk.T, diagonal=-1).sum(-1, keepdim=True) + (pq * pk).sum(-1, keepdim=True) * 0.5
    return num @ v.double() / den


def b11_decode_row_vector(cache_len, num_new):
    return torch.arange(cache_len, cache_len + num_new)[None, :]


def b11_stream_window_first(cached, window, sinks=4):
    n = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., n - window:, :], torch.full((window,), -(n - window - sinks)))
    return torch.cat((moved, cached[..., :sinks, :]), dim=-2)


def b11_expected_no_theta(cross, offsets, base=10000.0):
    c = cross.double()
    angles = offsets.double()[:, None] * torch.ones(cross.shape[0], dtype=torch.float64)
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b11_asymmetry_base_fixed(query, key, offsets, base=10000.0):
    theta = _b11_theta(query.shape[-1], 10000.0)
    q, k = query.double(), key.double()
    return -2 * torch.sin(offsets.double()[:, None] * theta) @ (q[0::2] * k[1::2] - q[1::2] * k[0::2])


def b11_head_half_layout(key, target, base=10000.0):
    d = key.shape[-1]
    angles = target * _b11_theta(d, base)
    k = key.double()
    a, b = k[: d // 2], k[d // 2:]
    return torch.cat((a * angles.cos() - b * angles.sin(), a * angles.sin() + b * angles.cos())).to(key.dtype)


def b11_wavelength_one_over_d(dim, base):
    return 2 * math.pi * base ** (1 - 1 / dim)


def b11_rope_exponent_over_d_minus_2(x, positions=None, base=10000.0):
    n, d = x.shape[-2:]
    pos = torch.arange(n) if positions is None else positions
    angles = pos.double()[:, None] * base ** (-torch.arange(0, d, 2, dtype=torch.float64) / (d - 2))
    cos, sin = angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)
    xd = x.double()
    rotated = torch.stack((-xd[..., 1::2], xd[..., 0::2]), -1).flatten(-2)
    return (xd * cos + rotated * sin).to(x.dtype)


def b11_kv_dim_one(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=1)


def b11_padded_pads_zero(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return (torch.cumsum(mask, dim=1) + padding_idx) * mask


def b11_sinusoidal_base_ignored(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b11_theta(dim, 10000.0)
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).float()


def b11_shaw_offset_on_keys(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None]
    j = torch.arange(k_len)[None, :] + query_offset
    return (j - i).clamp(-c, c) + c


def b11_shift_transposed(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    shifted = padded.reshape(*rel_logits.shape[:-2], lk + 1, lq)[..., 1:, :].reshape(rel_logits.shape)
    return shifted.transpose(-2, -1) if lq == lk else shifted


def b11_t5_max_distance_fixed(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return posenc.t5_relative_position_bucket(relative_position, bidirectional=bidirectional,
                                              num_buckets=num_buckets, max_distance=128)


def b11_slopes_increasing(n):
    return list(reversed(posenc.alibi_slopes(n).tolist()))


def b11_rope2d_base_ignored(x, rows, columns, base=10000.0):
    return posenc.apply_rope_2d(x, rows, columns)


def b11_blocks_column_first(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    blocks = []
    for f in theta.tolist():
        for p in (column, row):
            a = torch.tensor(p * f, dtype=torch.float64)
            blocks.append(torch.stack([torch.stack([a.cos(), -a.sin()]), torch.stack([a.sin(), a.cos()])]))
    return torch.block_diag(*blocks)


def b11_counts_four_projections(positions, width):
    return (positions * width, positions * width, 4 * positions * width)


def b11_concat_base_ignored(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = 10000.0 ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), -1)


def b11_rows_nearest(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option != "interpolate":
        return reference_extended_rows(table, length, option)
    where = torch.linspace(0, table.shape[0] - 1, length, dtype=torch.float64)
    return table[where.round().long()]


def b11_pi_base_divided(dim, base, factor):
    return _b11_theta(dim, base / factor)


def b11_ntk_exponent_in_ladder(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / (dim - 2))


def b11_dynamic_without_max(dim, base, factor, train_len, seq_len):
    scale = factor * seq_len / train_len - (factor - 1)
    return _b11_theta(dim, base * scale ** (dim / (dim - 2)))


def b11_yarn_attention_factor_applied(dim, base, factor, train_len, beta_fast, beta_slow):
    freqs, attention_factor = posenc.yarn_frequencies(dim, base, factor=factor, original_max_position=train_len,
                                                      beta_fast=beta_fast, beta_slow=beta_slow)
    return freqs * attention_factor


def b11_llama_hard_threshold(dim, base, factor, train_len, low, high):
    inv = _b11_theta(dim, base)
    wavelength = 2 * math.pi / inv
    return torch.where(wavelength > train_len / ((low + high) / 2), inv / factor, inv)


HELDOUT_BATCH_11 = [
    Heldout("check_attention", "(weights, output)", b11_attention_returns_swapped,
            ("order", "swapped", "(output, weights)")),
    Heldout("check_attention", "sqrt of the value width", b11_attention_scale_by_value_width,
            ("d_k", "v.shape", "width of the values", "q.shape[-1]", "key width", "query width")),
    Heldout("check_cross_attention", "keys from y", b11_cross_keys_from_y,
            ("memory z", "from z", "keys come", "z w_k", "z.shape")),
    Heldout("check_decayed_rows", "lr wd / 2", b11_decay_half, ("1/2", "half", "factor 2", "per step")),
    Heldout("check_alibi_bias_from_slopes", "slope times head number", b11_alibi_slope_times_head,
            ("head", "slope")),
    Heldout("check_alibi_bias_at_positions", "slopes squared", b11_at_slopes_squared, ("squared", "m_r²", "slope")),
    Heldout("check_reversal_gap", "max per feature", b11_gap_per_feature,
            ("number", "scalar", "one value", "per feature", ".max()", "axis")),
    Heldout("check_unrotated_outputs", "base ignored", b11_unrotate_base_ignored, ("base",)),
    Heldout("check_linear_rope_attention", "relu + 1 features", b11_linear_relu_plus_one, ("feature map", "elu")),
    Heldout("check_linear_rope_attention", "half diagonal in the denominator", b11_linear_strictly_causal_denominator,
            ("denominator", "diagonal", "j <= i")),
    Heldout("check_decode_positions", "a row vector", b11_decode_row_vector, ("axis", "1-d", "shape (num_new,)")),
    Heldout("check_streaming_cache", "window before the sinks", b11_stream_window_first,
            ("order", "first", "ahead", "before")),
    Heldout("check_expected_score", "no frequencies", b11_expected_no_theta, ("θ", "frequenc", "ladder")),
    Heldout("check_score_asymmetry", "base fixed", b11_asymmetry_base_fixed, ("base",)),
    Heldout("check_positional_head_query", "half layout", b11_head_half_layout, ("layout", "half", "pairs")),
    Heldout("check_slowest_wavelength", "b^(1 - 1/d)", b11_wavelength_one_over_d,
            ("1 - 2/d", "exponent", "d/2 - 1")),
    Heldout("check_apply_rope", "exponent over d - 2", b11_rope_exponent_over_d_minus_2,
            ("2ℓ/d", "exponent", "d - 2", "frequenc")),
    Heldout("check_repeat_kv", "dim=1", b11_kv_dim_one, ("dim=-3", "axis", "sequence axis")),
    Heldout("check_padded_positions", "padding set to 0", b11_padded_pads_zero, ("padding tokens", "padding_idx")),
    Heldout("check_sinusoidal", "base ignored", b11_sinusoidal_base_ignored, ("base",)),
    Heldout("check_shaw_index", "offset added to the keys", b11_shaw_offset_on_keys,
            ("query_offset", "offset", "sign")),
    Heldout("check_relative_shift", "square result transposed", b11_shift_transposed,
            ("transpos", "rows and columns", "swapped")),
    Heldout("check_t5_bucket", "max_distance fixed", b11_t5_max_distance_fixed, ("max_distance",)),
    Heldout("check_alibi_slopes", "increasing", b11_slopes_increasing, ("order", "revers", "decreas", "increas")),
    Heldout("check_apply_rope_2d", "base ignored", b11_rope2d_base_ignored, ("base",)),
    Heldout("check_rope_matrix_2d_blocks", "column block first", b11_blocks_column_first,
            ("row", "column")),
    Heldout("check_position_parameter_counts", "four projections", b11_counts_four_projections,
            ("4 n d", "4n d", "four", "three", "3 n d")),
    Heldout("check_concatenated_sinusoidal", "base ignored", b11_concat_base_ignored, ("base",)),
    Heldout("check_extended_rows", "nearest row", b11_rows_nearest, ("nearest", "linear", "blend", "round")),
    Heldout("check_pi_frequencies", "base divided", b11_pi_base_divided, ("base", "divide the frequencies")),
    Heldout("check_ntk_frequencies", "ladder over d - 2", b11_ntk_exponent_in_ladder, ("2ℓ/d", "exponent", "d - 2")),
    Heldout("check_dynamic_ntk_frequencies", "no max with L", b11_dynamic_without_max,
            ("max", "training length", "below", "shorter")),
    Heldout("check_yarn_frequencies", "attention factor on the frequencies", b11_yarn_attention_factor_applied,
            ("attention factor", "temperature", "mscale", "0.1 ln")),
    Heldout("check_llama3_frequencies", "hard threshold", b11_llama_hard_threshold,
            ("blend", "smooth", "linear", "ramp")),
]


# =========================================================================== batch 12
# Written at about 19:22 UTC, after the generalisation that followed batch 11, from the exercises' statements only,
# without running any entry; measured once.


def _b12_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b12_attention_mask_multiplied(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores * mask
    weights = scores.softmax(-1)
    return weights @ v, weights


def b12_attention_bmm(q, k, v, mask=None):
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return torch.bmm(weights, v), weights


def b12_cross_query_weights_transposed(y, z, w_q, w_k, w_v):
    scores = (y @ w_q.T) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def b12_cross_scaled_twice(y, z, w_q, w_k, w_v):
    scores = (y @ w_q / math.sqrt(w_k.shape[1])) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def b12_decay_lr_plus_wd(initial, lr, weight_decay, steps):
    return initial * (1 - lr - weight_decay) ** steps


def b12_alibi_from_slopes_normalised(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return slopes[:, None, None] * (pos[None, :] - pos[:, None]) / length


def b12_at_positions_sum(slopes, positions):
    p = positions.double()
    return -slopes.double()[:, None, None] * (p[None, :] + p[:, None]).abs()


def b12_gap_negative_step(layer, x):
    index = list(range(x.shape[0]))[::-1]
    return (layer(x[index]) - layer(x)[::-1]).abs().max().item()


def b12_unrotate_negated(outputs, positions, base=10000.0):
    return -posenc.apply_rope(outputs, positions, base=base)


def _b12_phi(x):
    return torch.nn.functional.elu(x.double()) + 1


def b12_linear_no_denominator(q, k, v, base=10000.0):
    pq, pk = _b12_phi(q), _b12_phi(k)
    return torch.tril(posenc.apply_rope(pq, base=base) @ posenc.apply_rope(pk, base=base).T) @ v.double()


def b12_linear_denominator_keys_rotated(q, k, v, base=10000.0):
    pq, pk = _b12_phi(q), _b12_phi(k)
    num = torch.tril(posenc.apply_rope(pq, base=base) @ posenc.apply_rope(pk, base=base).T)
    return num @ v.double() / torch.tril(pq @ posenc.apply_rope(pk, base=base).T).sum(-1, keepdim=True)


def b12_decode_end_num_new(cache_len, num_new):
    return torch.arange(cache_len, max(num_new, cache_len + 1))


def b12_expected_offsets_negated(cross, offsets, base=10000.0):
    c = cross.double()
    angles = -offsets.double()[:, None] * _b12_theta(2 * cross.shape[0], base)
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b12_expected_not_summed(cross, offsets, base=10000.0):
    c = cross.double()
    angles = offsets.double()[:, None] * _b12_theta(2 * cross.shape[0], base)
    return angles.cos() * (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() * (c[:, 1, 0] - c[:, 0, 1])


def b12_asymmetry_only_s_delta(query, key, offsets, base=10000.0):
    return posenc.apply_rope(key.double().expand(len(offsets), -1), offsets, base=base) @ query.double()


def b12_head_base_ignored(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([target]))[0]


def b12_wavelength_half_exponent(dim, base):
    return 2 * math.pi * base ** ((dim - 2) / (2 * dim))


def b12_rope_angles_in_turns(x, positions=None, base=10000.0):
    n, d = x.shape[-2:]
    pos = torch.arange(n) if positions is None else positions
    freqs = 2 * math.pi * _b12_theta(d, base)
    return posenc.apply_rope(x, pos, base=base, frequencies=freqs)


def b12_kv_float32(kv, num_heads):
    return kv.float().repeat_interleave(num_heads // kv.shape[-3], dim=-3)


def b12_padded_zero_is_padding(input_ids, padding_idx=1):
    mask = input_ids.ne(0).long()
    return torch.cumsum(mask, dim=1) * mask + padding_idx


def b12_sinusoidal_transposed(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b12_theta(dim, base)
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).T.contiguous().float()


def b12_shaw_absolute(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return (j - i).abs().clamp(max=c) + c


def b12_t5_no_upper_half(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    bucket = posenc.t5_relative_position_bucket(-(relative_position.abs()), bidirectional=False,
                                                num_buckets=num_buckets // 2 if bidirectional else num_buckets,
                                                max_distance=max_distance)
    return bucket


def b12_slopes_halving(n):
    return [2.0 ** -(h + 1) for h in range(n)]


def b12_rope2d_both_on_whole(x, rows, columns, base=10000.0):
    return posenc.apply_rope(posenc.apply_rope(x, rows, base=base), columns, base=base)


def b12_blocks_row_twice(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    blocks = []
    for f in theta.tolist():
        for p in (row, row):
            a = torch.tensor(p * f, dtype=torch.float64)
            blocks.append(torch.stack([torch.stack([a.cos(), -a.sin()]), torch.stack([a.sin(), a.cos()])]))
    return torch.block_diag(*blocks)


def b12_recovery_parenthesis(o):
    return (1.0 / (o.double() - 1.0)).round().long()


def b12_counts_square_table(positions, width):
    return (positions * positions, positions * width, 3 * positions * width)


def b12_concat_interleaved(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2)


def b12_pi_factor_power(dim, base, factor):
    exponent = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    return base ** -exponent / factor ** exponent


def b12_ntk_exponent_on_base(dim, base, factor):
    return _b12_theta(dim, base ** (dim / (dim - 2)) * factor)


def b12_dynamic_no_factor(dim, base, factor, train_len, seq_len):
    length = max(seq_len, train_len)
    return _b12_theta(dim, base * (length / train_len) ** (dim / (dim - 2)))


def b12_yarn_ramp_per_coordinate(dim, base, factor, train_len, beta_fast, beta_slow):
    def correction(r):
        return dim * math.log(train_len / (r * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(correction(beta_fast)), 0), min(math.ceil(correction(beta_slow)), dim - 1)
    ramp = ((torch.arange(dim, dtype=torch.float64) - low) / max(high - low, 1e-3)).clamp(0, 1)
    inv = base ** (-torch.arange(dim, dtype=torch.float64) / dim)
    return inv / factor * ramp + inv * (1 - ramp)


def b12_llama_factors_swapped(dim, base, factor, train_len, low, high):
    inv = _b12_theta(dim, base)
    smooth = ((train_len * inv / (2 * math.pi) - high) / (low - high)).clamp(0, 1)
    return (1 - smooth) * inv / factor + smooth * inv


HELDOUT_BATCH_12 = [
    Heldout("check_attention", "mask multiplied into the scores", b12_attention_mask_multiplied,
            ("-inf", "zero", "masked_fill")),
    Heldout("check_attention", "bmm", b12_attention_bmm, ("leading", "batch", "matmul", "3-d", "dimensions")),
    Heldout("check_cross_attention", "w_q transposed", b12_cross_query_weights_transposed,
            ("transpos", "w_q.shape", "y @ w_q")),
    Heldout("check_cross_attention", "scaled twice", b12_cross_scaled_twice, ("twice", "d_k")),
    Heldout("check_decayed_rows", "1 - lr - wd", b12_decay_lr_plus_wd, ("product", "lr wd", "lr + wd", "sum")),
    Heldout("check_alibi_bias_from_slopes", "divided by the length", b12_alibi_from_slopes_normalised,
            ("length", "divided", "normalis")),
    Heldout("check_alibi_bias_at_positions", "p_j + p_i", b12_at_positions_sum,
            ("difference", "p_j - p_i", "sum", "p_j + p_i")),
    Heldout("check_reversal_gap", "negative step", b12_gap_negative_step, ("flip", "negative step", "[::-1]")),
    Heldout("check_unrotated_outputs", "negated forward rotation", b12_unrotate_negated,
            ("direction", "r_i^t", "negat", "-positions", "sign", "forward")),
    Heldout("check_linear_rope_attention", "no denominator", b12_linear_no_denominator,
            ("denominator", "normalis", "divide")),
    Heldout("check_linear_rope_attention", "keys rotated in the denominator", b12_linear_denominator_keys_rotated,
            ("denominator",)),
    Heldout("check_decode_positions", "end at num_new", b12_decode_end_num_new,
            ("end", "cache_len + num_new", "num_new")),
    Heldout("check_expected_score", "offsets negated", b12_expected_offsets_negated,
            ("sign", "sine", "-δ", "negat")),
    Heldout("check_expected_score", "not summed over pairs", b12_expected_not_summed,
            ("sum", "pairs", "axis")),
    Heldout("check_score_asymmetry", "s(δ) only", b12_asymmetry_only_s_delta, ("s(-δ)", "difference", "minus")),
    Heldout("check_positional_head_query", "base ignored", b12_head_base_ignored, ("base",)),
    Heldout("check_slowest_wavelength", "exponent halved", b12_wavelength_half_exponent,
            ("exponent", "1 - 2/d", "half")),
    Heldout("check_apply_rope", "angles times 2π", b12_rope_angles_in_turns, ("2π", "radian", "turn")),
    Heldout("check_repeat_kv", "cast to float32", b12_kv_float32, ("dtype",)),
    Heldout("check_padded_positions", "id 0 as padding", b12_padded_zero_is_padding,
            ("padding_idx", "id 0", "!=")),
    Heldout("check_sinusoidal", "transposed", b12_sinusoidal_transposed,
            ("transpos", "permuted", "(seq_len, dim)", "axes")),
    Heldout("check_shaw_index", "|j - i|", b12_shaw_absolute, ("absolute", "sign", "direction", "abs")),
    Heldout("check_t5_bucket", "no upper half", b12_t5_no_upper_half,
            ("upper half", "direction", "future", "past", "sign")),
    Heldout("check_alibi_slopes", "2^-(h)", b12_slopes_halving, ("8/n", "2^(-8h/n)", "ratio", "8h/n")),
    Heldout("check_apply_rope_2d", "both rotations on the whole vector", b12_rope2d_both_on_whole,
            ("half", "whole", "first d/2")),
    Heldout("check_rope_matrix_2d_blocks", "row twice", b12_blocks_row_twice, ("column",)),
    Heldout("check_position_recovery", "1/(o - 1)", b12_recovery_parenthesis,
            ("1/o - 1", "parenthes", "order")),
    Heldout("check_position_parameter_counts", "table N²", b12_counts_square_table,
            ("part 1", "n²", "table")),
    Heldout("check_concatenated_sinusoidal", "interleaved", b12_concat_interleaved,
            ("interleav", "concatenat", "sines first", "layout")),
    Heldout("check_pi_frequencies", "factor^(2ℓ/d)", b12_pi_factor_power,
            ("every frequency", "same factor", "s^", "exponent")),
    Heldout("check_ntk_frequencies", "exponent on the base", b12_ntk_exponent_on_base,
            ("exponent", "s^(d/(d-2))", "which term")),
    Heldout("check_dynamic_ntk_frequencies", "factor left out", b12_dynamic_no_factor,
            ("factor", "s·n/l", "s ·")),
    Heldout("check_yarn_frequencies", "one entry per coordinate", b12_yarn_ramp_per_coordinate,
            ("d/2", "one per pair", "pairs")),
    Heldout("check_llama3_frequencies", "the two factors swapped", b12_llama_factors_swapped,
            ("wrong way", "swapped", "low_freq_factor", "high_freq_factor")),
]


# =========================================================================== batch 13
# Written at about 19:26 UTC, after the generalisation that followed batch 12, from the exercises' statements only,
# without running any entry; measured once.


def _b13_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b13_attention_mask_transposed(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        m = mask.T if mask.shape[-1] == mask.shape[-2] else mask
        scores = scores.masked_fill(~m, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def b13_attention_weights_unmasked(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    raw = scores.softmax(-1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(-1) @ v, raw


def b13_cross_projections_swapped(y, z, w_q, w_k, w_v):
    scores = (y @ w_k) @ (z @ w_q).T / math.sqrt(w_k.shape[1])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def b13_cross_log_softmax(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return torch.log_softmax(scores, dim=-1) @ (z @ w_v)


def b13_decay_in_place(initial, lr, weight_decay, steps):
    for _ in range(steps):
        initial -= lr * weight_decay * initial
    return initial


def b13_alibi_from_slopes_one_more(slopes, length):
    pos = torch.arange(length + 1, dtype=slopes.dtype)
    return slopes[:, None, None] * (pos[None, :] - pos[:, None])


def b13_at_positions_from_first(slopes, positions):
    p = positions.double()
    return -slopes.double()[:, None, None] * (p[None, :] - p[0]).abs().expand(len(p), -1)


def b13_gap_signed(layer, x):
    return (layer(x.flip(0)) - layer(x).flip(0)).max().item()


def b13_unrotate_rows_reversed(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -positions.flip(0), base=base)


def b13_linear_features_on_queries_only(q, k, v, base=10000.0):
    pq, pk = torch.nn.functional.elu(q.double()) + 1, k.double()
    num = torch.tril(posenc.apply_rope(pq, base=base) @ posenc.apply_rope(pk, base=base).T)
    return num @ v.double() / torch.tril(pq @ pk.T).sum(-1, keepdim=True)


def b13_decode_from_last(cache_len, num_new):
    start = cache_len + num_new - 1
    return torch.arange(start, start + num_new)


def b13_stream_window_includes_sinks(cached, window, sinks=4):
    n = cached.shape[-2]
    kept = window - sinks
    moved = posenc.apply_rope(cached[..., n - kept:, :], torch.full((kept,), -(n - kept - sinks)))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b13_expected_trace_in_sine(cross, offsets, base=10000.0):
    c = cross.double()
    angles = offsets.double()[:, None] * _b13_theta(2 * cross.shape[0], base)
    trace = c[:, 0, 0] + c[:, 1, 1]
    return angles.cos() @ trace + angles.sin() @ trace


def b13_asymmetry_mean(query, key, offsets, base=10000.0):
    theta = _b13_theta(query.shape[-1], base)
    q, k = query.double(), key.double()
    terms = -2 * torch.sin(offsets.double()[:, None] * theta) * (q[0::2] * k[1::2] - q[1::2] * k[0::2])
    return terms.mean(-1)


def b13_head_key_reversed(key, target, base=10000.0):
    return posenc.apply_rope(key.flip(0)[None], torch.tensor([target]), base=base)[0]


def b13_wavelength_half_dim(dim, base):
    return 2 * math.pi * base ** (1 - 2 / (dim / 2))


def b13_rope_sin_cos_swapped(x, positions=None, base=10000.0):
    n, d = x.shape[-2:]
    pos = torch.arange(n) if positions is None else positions
    angles = pos.double()[:, None] * _b13_theta(d, base)
    cos, sin = angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)
    xd = x.double()
    rotated = torch.stack((-xd[..., 1::2], xd[..., 0::2]), -1).flatten(-2)
    return (xd * sin + rotated * cos).to(x.dtype)


def b13_kv_always_doubled(kv, num_heads):
    if kv.shape[-3] == num_heads:
        return kv.clone()
    return torch.cat([kv, kv], dim=-3).reshape(*kv.shape[:-3], 2, kv.shape[-3], *kv.shape[-2:]).transpose(
        -4, -3).reshape(*kv.shape[:-3], 2 * kv.shape[-3], *kv.shape[-2:])


def b13_padded_mask_inverted(input_ids, padding_idx=1):
    mask = input_ids.eq(padding_idx).long()
    return torch.cumsum(mask, dim=1) * mask + padding_idx


def b13_sinusoidal_batch_axis(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b13_theta(dim, base)
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).float()[None]


def b13_shaw_transposed(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[None, :] + query_offset
    j = torch.arange(k_len)[:, None]
    return (j - i).clamp(-c, c) + c


def b13_shift_padding_kept(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    shifted = padded.reshape(*rel_logits.shape[:-2], lk + 1, lq)[..., 1:, :].reshape(*rel_logits.shape[:-2], lq, lk)
    return torch.nn.functional.pad(shifted, (0, 1))


def b13_slopes_float16(n):
    return posenc.alibi_slopes(n).half()


def b13_rope2d_integer_positions(x, rows, columns, base=10000.0):
    return posenc.apply_rope_2d(x, rows.long(), columns.long(), base=base)


def b13_blocks_rows_then_columns(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    blocks = []
    for p in (row, column):
        for f in theta.tolist():
            a = torch.tensor(p * f, dtype=torch.float64)
            blocks.append(torch.stack([torch.stack([a.cos(), -a.sin()]), torch.stack([a.sin(), a.cos()])]))
    return torch.block_diag(*blocks)


def b13_recovery_truncate_first(o):
    return (1.0 / o.double()).long() - 1


def b13_counts_bias_per_position(positions, width):
    return (positions * width, positions * width + positions, 3 * positions * width)


def b13_concat_positions_from_one(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(1, seq_len + 1, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), -1)


def b13_rows_interpolate_no_clamp(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option != "interpolate":
        return reference_extended_rows(table, length, option)
    where = torch.linspace(0, table.shape[0] - 1, length, dtype=torch.float64)
    low = where.floor().long()
    fraction = (where - low).to(table.dtype)[:, None]
    return (1 - fraction) * table[low] + fraction * table[low + 1]


def b13_pi_linspace_ladder(dim, base, factor):
    return base ** -torch.linspace(0, 1, dim // 2, dtype=torch.float64) / factor


def b13_ntk_integer_exponent(dim, base, factor):
    return _b13_theta(dim, base * factor ** (dim // (dim - 2)))


def b13_dynamic_static_always(dim, base, factor, train_len, seq_len):
    return _b13_theta(dim, base * factor ** (dim / (dim - 2)))


def b13_yarn_fixed_betas(dim, base, factor, train_len, beta_fast, beta_slow):
    return posenc.yarn_frequencies(dim, base, factor=factor, original_max_position=train_len)[0]


def b13_llama_fixed_factors(dim, base, factor, train_len, low, high):
    return posenc.llama3_frequencies(dim, base, factor=factor, original_max_position=train_len)


HELDOUT_BATCH_13 = [
    Heldout("check_attention", "square mask transposed", b13_attention_mask_transposed,
            ("transpos", "mask", "(lq, lk)")),
    Heldout("check_attention", "weights before masking", b13_attention_weights_unmasked,
            ("weights", "masked")),
    Heldout("check_cross_attention", "w_q and w_k swapped", b13_cross_projections_swapped,
            ("w_q", "w_k", "swapped")),
    Heldout("check_cross_attention", "log_softmax", b13_cross_log_softmax, ("log", "sum to 1", "exp")),
    Heldout("check_decayed_rows", "in place", b13_decay_in_place, ("in place", "modified")),
    Heldout("check_alibi_bias_from_slopes", "length + 1", b13_alibi_from_slopes_one_more,
            ("one too many", "n + 1", "length + 1", "length")),
    Heldout("check_alibi_bias_at_positions", "distance to the first position", b13_at_positions_from_first,
            ("p_j - p_i", "each pair", "query", "p_0")),
    Heldout("check_reversal_gap", "no absolute value", b13_gap_signed, ("abs", "absolute", "signed")),
    Heldout("check_unrotated_outputs", "positions reversed", b13_unrotate_rows_reversed,
            ("revers", "order", "row i")),
    Heldout("check_linear_rope_attention", "features on the queries only", b13_linear_features_on_queries_only,
            ("feature map", "keys", "φ(k")),
    Heldout("check_decode_positions", "start at the last new position", b13_decode_from_last,
            ("start", "cache_len")),
    Heldout("check_streaming_cache", "window counts the sinks", b13_stream_window_includes_sinks,
            ("window", "sinks")),
    Heldout("check_expected_score", "trace in the sine term", b13_expected_trace_in_sine,
            ("sine", "c21 - c12", "sin(δθ_ℓ)")),
    Heldout("check_score_asymmetry", "mean over pairs", b13_asymmetry_mean, ("mean", "average", "sum")),
    Heldout("check_positional_head_query", "key reversed", b13_head_key_reversed, ("key", "revers", "order")),
    Heldout("check_slowest_wavelength", "d/2 as d", b13_wavelength_half_dim, ("1 - 2/d", "d/2", "exponent")),
    Heldout("check_apply_rope", "sin and cos swapped", b13_rope_sin_cos_swapped, ("sin", "cos", "swapped")),
    Heldout("check_repeat_kv", "always doubled", b13_kv_always_doubled, ("group", "h / h_kv", "times")),
    Heldout("check_padded_positions", "mask inverted", b13_padded_mask_inverted,
            ("invert", "padding tokens", "real tokens", "mask")),
    Heldout("check_sinusoidal", "a batch axis", b13_sinusoidal_batch_axis, ("axis", "unsqueeze", "one axis too many")),
    Heldout("check_shaw_index", "transposed", b13_shaw_transposed, ("transpos", "(q_len, k_len)", "permuted")),
    Heldout("check_relative_shift", "padding column kept", b13_shift_padding_kept,
            ("shape", "column", "lk + 1", "drop")),
    Heldout("check_alibi_slopes", "float16", b13_slopes_float16, ("float16", "precision", "dtype")),
    Heldout("check_apply_rope_2d", "positions made integers", b13_rope2d_integer_positions,
            ("integer", "real", "truncat")),
    Heldout("check_rope_matrix_2d_blocks", "row blocks then column blocks", b13_blocks_rows_then_columns,
            ("order", "interleav", "block")),
    Heldout("check_position_recovery", "truncate 1/o", b13_recovery_truncate_first, ("round", "truncat", "nearest")),
    Heldout("check_position_parameter_counts", "a bias per position", b13_counts_bias_per_position,
            ("+n", "bias", "n d + n")),
    Heldout("check_concatenated_sinusoidal", "positions from 1", b13_concat_positions_from_one,
            ("position 0", "from 1", "start", "off by")),
    Heldout("check_extended_rows", "interpolation index past the end", b13_rows_interpolate_no_clamp,
            ("last", "index", "out of", "clamp")),
    Heldout("check_pi_frequencies", "linspace ladder", b13_pi_linspace_ladder,
            ("2ℓ/(d - 2)", "linspace", "exponent")),
    Heldout("check_ntk_frequencies", "integer exponent", b13_ntk_integer_exponent,
            ("integer", "//", "d/(d - 2)", "d/(d-2)", "exponent")),
    Heldout("check_dynamic_ntk_frequencies", "static NTK always", b13_dynamic_static_always,
            ("seq_len", "does not use", "static")),
    Heldout("check_yarn_frequencies", "betas fixed", b13_yarn_fixed_betas, ("beta_fast", "beta_slow", "does not use")),
    Heldout("check_llama3_frequencies", "factors fixed", b13_llama_fixed_factors,
            ("low_freq_factor", "high_freq_factor", "does not use")),
]


# =========================================================================== batch 14
# Written at about 19:31 UTC, after the generalisation that followed batch 13, from the exercises' statements only,
# without running any entry; measured once.


def _b14_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b14_attention_dot_T(q, k, v, mask=None):
    scores = q @ k.T / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def b14_attention_softmax_dim1(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nn.functional.softmax(scores, dim=1)
    return weights @ v, weights


def b14_cross_scale_by_number_of_keys(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(z.shape[0])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def b14_decay_lr_over_wd(initial, lr, weight_decay, steps):
    return initial * (1 - lr / weight_decay) ** steps


def b14_decay_exponent_lr_steps(initial, lr, weight_decay, steps):
    return initial * (1 - weight_decay) ** (steps * lr)


def b14_alibi_mean_slope(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return slopes.mean().expand(len(slopes))[:, None, None] * (pos[None, :] - pos[:, None])


def b14_at_positions_extra_constant(slopes, positions):
    p = positions.double()
    m = slopes.double()[:, None, None]
    return -m * (p[None, :] - p[:, None]).abs() - m


def b14_gap_norm(layer, x):
    return (layer(x.flip(0)) - layer(x).flip(0)).norm().item()


def b14_unrotate_positions_minus_one(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -(positions - 1), base=base)


def b14_unrotate_first_half(outputs, positions, base=10000.0):
    d = outputs.shape[-1]
    back = posenc.apply_rope(outputs[..., : d // 2], -positions, base=base)
    return torch.cat((back, outputs[..., d // 2:]), -1)


def b14_linear_values_rotated(q, k, v, base=10000.0):
    pq, pk = torch.nn.functional.elu(q.double()) + 1, torch.nn.functional.elu(k.double()) + 1
    num = torch.tril(posenc.apply_rope(pq, base=base) @ posenc.apply_rope(pk, base=base).T)
    return num @ posenc.apply_rope(v.double(), base=base) / torch.tril(pq @ pk.T).sum(-1, keepdim=True)


def b14_decode_one_early(cache_len, num_new):
    return torch.arange(num_new) + cache_len - 1


def b14_stream_shift_window_minus_sinks(cached, window, sinks=4):
    n = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., n - window:, :], torch.full((window,), -(window - sinks)))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b14_expected_summed_over_offsets(cross, offsets, base=10000.0):
    c = cross.double()
    angles = offsets.double()[:, None] * _b14_theta(2 * cross.shape[0], base)
    return (angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])).sum()


def b14_expected_half_trace(cross, offsets, base=10000.0):
    c = cross.double()
    angles = offsets.double()[:, None] * _b14_theta(2 * cross.shape[0], base)
    return angles.cos() @ ((c[:, 0, 0] + c[:, 1, 1]) / 2) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b14_asymmetry_ladder_reversed(query, key, offsets, base=10000.0):
    theta = _b14_theta(query.shape[-1], base).flip(0)
    q, k = query.double(), key.double()
    return -2 * torch.sin(offsets.double()[:, None] * theta) @ (q[0::2] * k[1::2] - q[1::2] * k[0::2])


def b14_head_ignores_key(key, target, base=10000.0):
    return posenc.apply_rope(torch.ones_like(key)[None], torch.tensor([target]), base=base)[0]


def b14_wavelength_two_pi_theta(dim, base):
    return 2 * math.pi * base ** (-(1 - 2 / dim))


def b14_rope_angles_transposed(x, positions=None, base=10000.0):
    n, d = x.shape[-2:]
    pos = torch.arange(n) if positions is None else positions
    angles = _b14_theta(d, base)[:, None] * pos.double()[None, :]
    cos, sin = angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)
    xd = x.double()
    rotated = torch.stack((-xd[..., 1::2], xd[..., 0::2]), -1).flatten(-2)
    return (xd * cos + rotated * sin).to(x.dtype)


def b14_kv_view_after_expand(kv, num_heads):
    h_kv = kv.shape[-3]
    expanded = kv[..., :, None, :, :].expand(*kv.shape[:-2], num_heads // h_kv, *kv.shape[-2:])
    return expanded.transpose(-4, -3).view(*kv.shape[:-3], num_heads, *kv.shape[-2:])


def b14_padded_default_zero(input_ids, padding_idx=0):
    mask = input_ids.ne(padding_idx).long()
    return torch.cumsum(mask, dim=1) * mask + padding_idx


def b14_sinusoidal_half_precision(seq_len, dim, base=10000.0):
    angles = (torch.arange(seq_len, dtype=torch.float64)[:, None] * _b14_theta(dim, base)).half()
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).float()


def b14_sinusoidal_sines_only(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b14_theta(dim, base)
    return torch.stack((angles.sin(), angles.sin()), -1).flatten(-2).float()


def b14_shaw_clip_to_two_c(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return (j - i).clamp(-2 * c, 2 * c) + c


def b14_t5_always_bidirectional(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return posenc.t5_relative_position_bucket(relative_position, bidirectional=True, num_buckets=num_buckets,
                                              max_distance=max_distance)


def b14_slopes_first_divided(n):
    start = 2 ** -8 / n
    return [start * (2 ** (-8 / n)) ** h for h in range(n)]


def b14_rope2d_column_base_squared(x, rows, columns, base=10000.0):
    d = x.shape[-1]
    first = posenc.apply_rope(x[..., : d // 2], rows, base=base)
    second = posenc.apply_rope(x[..., d // 2:], columns, base=base ** 2)
    return torch.cat((first, second), -1)


def b14_blocks_column_sign_flipped(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    blocks = []
    for f in theta.tolist():
        for p in (row, -column):
            a = torch.tensor(p * f, dtype=torch.float64)
            blocks.append(torch.stack([torch.stack([a.cos(), -a.sin()]), torch.stack([a.sin(), a.cos()])]))
    return torch.block_diag(*blocks)


def b14_recovery_indices(o):
    return torch.arange(len(o))


def b14_counts_bias_row(positions, width):
    return (positions * width, (positions + 1) * width, 3 * (positions + 1) * width)


def b14_concat_positions_normalised(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = (torch.arange(seq_len, dtype=torch.float64) / seq_len)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), -1)


def b14_rows_copy_repeat(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option == "copy":
        return table.repeat(max(length // table.shape[0], 1), 1)[:length]
    return reference_extended_rows(table, length, option)


def b14_pi_first_half(dim, base, factor):
    theta = _b14_theta(dim, base)
    half = dim // 4
    return torch.cat((theta[:half] / factor, theta[half:]))


def b14_ntk_ladder_from_one(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    return new_base ** (-torch.arange(1, dim, 2, dtype=torch.float64) / dim)


def b14_dynamic_minus_factor(dim, base, factor, train_len, seq_len):
    length = max(seq_len, train_len)
    scale = factor * length / train_len - factor + 2
    return _b14_theta(dim, base * scale ** (dim / (dim - 2)))


def b14_yarn_multiplied(dim, base, factor, train_len, beta_fast, beta_slow):
    def correction(r):
        return dim * math.log(train_len / (r * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(math.floor(correction(beta_fast)), 0), min(math.ceil(correction(beta_slow)), dim - 1)
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / max(high - low, 1e-3)).clamp(0, 1)
    inv = _b14_theta(dim, base)
    return inv * factor * ramp + inv * (1 - ramp)


def b14_llama_regions_swapped(dim, base, factor, train_len, low, high):
    inv = _b14_theta(dim, base)
    wavelength = 2 * math.pi / inv
    smooth = ((train_len / wavelength - low) / (high - low)).clamp(0, 1)
    return smooth * inv / factor + (1 - smooth) * inv


HELDOUT_BATCH_14 = [
    Heldout("check_attention", "k.T", b14_attention_dot_T, ("transpose(-2, -1)", ".t", "last two axes", "mt")),
    Heldout("check_attention", "softmax dim=1", b14_attention_softmax_dim1, ("dim=-1", "axis", "over the keys")),
    Heldout("check_cross_attention", "sqrt of the number of keys", b14_cross_scale_by_number_of_keys,
            ("d_k", "number of keys", "z.shape[0]")),
    Heldout("check_decayed_rows", "lr / wd", b14_decay_lr_over_wd, ("lr wd", "divid", "lr / wd", "product")),
    Heldout("check_decayed_rows", "(1 - wd)^(lr T)", b14_decay_exponent_lr_steps, ("per step", "exponent", "lr wd")),
    Heldout("check_alibi_bias_from_slopes", "mean slope for every head", b14_alibi_mean_slope,
            ("head", "same", "mean", "own slope")),
    Heldout("check_alibi_bias_at_positions", "an extra -m", b14_at_positions_extra_constant,
            ("diagonal", "constant", "offset")),
    Heldout("check_reversal_gap", "norm", b14_gap_norm, ("norm", "largest", "max")),
    Heldout("check_unrotated_outputs", "positions - 1", b14_unrotate_positions_minus_one,
            ("off by", "shifted", "-1", "minus 1", "positions")),
    Heldout("check_unrotated_outputs", "first half only", b14_unrotate_first_half,
            ("half", "all pairs", "every pair", "not rotated", "not turned")),
    Heldout("check_linear_rope_attention", "values rotated", b14_linear_values_rotated, ("values", "v ")),
    Heldout("check_decode_positions", "one early", b14_decode_one_early, ("off by", "-1", "start")),
    Heldout("check_streaming_cache", "shift window - sinks", b14_stream_shift_window_minus_sinks,
            ("shift", "n - w - sinks")),
    Heldout("check_expected_score", "summed over offsets", b14_expected_summed_over_offsets,
            ("one value per offset", "axis", "sum")),
    Heldout("check_expected_score", "half the trace", b14_expected_half_trace, ("trace", "c11 + c22", "1/2", "half")),
    Heldout("check_score_asymmetry", "ladder reversed", b14_asymmetry_ladder_reversed,
            ("frequenc", "ladder", "order", "revers")),
    Heldout("check_positional_head_query", "key ignored", b14_head_ignores_key, ("key", "does not use")),
    Heldout("check_slowest_wavelength", "2π θ", b14_wavelength_two_pi_theta, ("2π/θ", "divided", "frequency")),
    Heldout("check_apply_rope", "angles (d/2, L)", b14_rope_angles_transposed,
            ("axis", "broadcast", "positions[:, none]", "(l, d/2)")),
    Heldout("check_repeat_kv", "view after expand", b14_kv_view_after_expand, ("reshape", "contiguous", "view")),
    Heldout("check_padded_positions", "default padding_idx 0", b14_padded_default_zero,
            ("default", "padding_idx=1")),
    Heldout("check_sinusoidal", "angles in half precision", b14_sinusoidal_half_precision,
            ("precision", "float16", "half")),
    Heldout("check_sinusoidal", "sines only", b14_sinusoidal_sines_only, ("cos",)),
    Heldout("check_shaw_index", "clip to 2c", b14_shaw_clip_to_two_c, ("clip", "[-c, c]")),
    Heldout("check_t5_bucket", "always bidirectional", b14_t5_always_bidirectional,
            ("bidirectional", "does not use", "causal")),
    Heldout("check_alibi_slopes", "2^-8 / n", b14_slopes_first_divided, ("8/n", "exponent", "2^(-8/n)")),
    Heldout("check_apply_rope_2d", "column base squared", b14_rope2d_column_base_squared, ("base", "column")),
    Heldout("check_rope_matrix_2d_blocks", "column sign flipped", b14_blocks_column_sign_flipped,
            ("column", "direction", "sign", "transpos", "-column")),
    Heldout("check_position_recovery", "indices", b14_recovery_indices, ("does not use", "outputs", "o ")),
    Heldout("check_position_parameter_counts", "a bias row", b14_counts_bias_row, ("+d", "bias", "n + 1")),
    Heldout("check_concatenated_sinusoidal", "positions normalised", b14_concat_positions_normalised,
            ("normalis", "divided", "seq_len", "position")),
    Heldout("check_extended_rows", "copy by repeat", b14_rows_copy_repeat, ("remainder", "mod", "shape", "rows")),
    Heldout("check_pi_frequencies", "first half divided", b14_pi_first_half,
            ("every pair", "all pairs", "every frequency")),
    Heldout("check_ntk_frequencies", "ladder from 1", b14_ntk_ladder_from_one, ("2ℓ/d", "from 1", "ℓ")),
    Heldout("check_dynamic_ntk_frequencies", "- s + 2", b14_dynamic_minus_factor, ("s - 1", "(s - 1)", "scale")),
    Heldout("check_yarn_frequencies", "multiplied by s", b14_yarn_multiplied, ("divide", "θ_ℓ / s", "times")),
    Heldout("check_llama3_frequencies", "regions swapped", b14_llama_regions_swapped,
            ("wrong way", "fast", "slow", "invert")),
]


# =========================================================================== batch 15
# Written at about 19:40 UTC, after the generalisation that followed batch 14, from the exercises' statements only,
# without running any entry; measured once.


def _b15_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b15_attention_isqrt(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.isqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def b15_cross_scale_input_width_of_keys(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[0])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def b15_decay_steps_inside(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay * steps) ** steps


def b15_decay_separate_factors(initial, lr, weight_decay, steps):
    return initial * (1 - lr) ** steps * (1 - weight_decay) ** steps


def b15_alibi_from_slopes_half(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return (slopes[:, None, None] * (pos[None, :] - pos[:, None])).half()


def b15_at_positions_slopes_sorted(slopes, positions):
    p = positions.double()
    m = slopes.double().sort(descending=True).values
    return -m[:, None, None] * (p[None, :] - p[:, None]).abs()


def b15_gap_relative(layer, x):
    out = layer(x)
    return ((layer(x.flip(0)) - out.flip(0)).abs().max() / out.abs().max()).item()


def b15_linear_denominator_keys_only(q, k, v, base=10000.0):
    pq, pk = torch.nn.functional.elu(q.double()) + 1, torch.nn.functional.elu(k.double()) + 1
    num = torch.tril(posenc.apply_rope(pq, base=base) @ posenc.apply_rope(pk, base=base).T)
    return num @ v.double() / pk.sum(-1).cumsum(0)[:, None]


def b15_linear_divided_by_count(q, k, v, base=10000.0):
    pq, pk = torch.nn.functional.elu(q.double()) + 1, torch.nn.functional.elu(k.double()) + 1
    num = torch.tril(posenc.apply_rope(pq, base=base) @ posenc.apply_rope(pk, base=base).T)
    return num @ v.double() / torch.arange(1, q.shape[0] + 1, dtype=torch.float64)[:, None]


def b15_decode_step_two(cache_len, num_new):
    return torch.arange(cache_len, cache_len + 2 * num_new, 2)


def b15_expected_offsets_plus_one(cross, offsets, base=10000.0):
    c = cross.double()
    angles = (offsets.double() + 1)[:, None] * _b15_theta(2 * cross.shape[0], base)
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b15_asymmetry_normalised(query, key, offsets, base=10000.0):
    theta = _b15_theta(query.shape[-1], base)
    q, k = query.double(), key.double()
    value = -2 * torch.sin(offsets.double()[:, None] * theta) @ (q[0::2] * k[1::2] - q[1::2] * k[0::2])
    return value / (q.norm() * k.norm())


def b15_wavelength_d_minus_one(dim, base):
    return 2 * math.pi * base ** ((dim - 1) / dim)


def b15_rope_power_not_product(x, positions=None, base=10000.0):
    n, d = x.shape[-2:]
    pos = torch.arange(n) if positions is None else positions
    angles = _b15_theta(d, base)[None, :] ** pos.double()[:, None]
    cos, sin = angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)
    xd = x.double()
    rotated = torch.stack((-xd[..., 1::2], xd[..., 0::2]), -1).flatten(-2)
    return (xd * cos + rotated * sin).to(x.dtype)


def b15_kv_only_mqa(kv, num_heads):
    if kv.shape[-3] == 1:
        return kv.expand(*kv.shape[:-3], num_heads, *kv.shape[-2:]).clone()
    return kv.clone()


def b15_padded_flattened(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return (mask.flatten().cumsum(0).view_as(mask)) * mask + padding_idx


def b15_sinusoidal_one_more_row(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len + 1, dtype=torch.float64)[:, None] * _b15_theta(dim, base)
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).float()


def b15_shift_row_index(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    out = torch.zeros_like(rel_logits)
    for r in range(lq):
        for j in range(lk):
            col = j + r
            if col < lk:
                out[..., r, j] = rel_logits[..., r, col]
    return out


def b15_t5_log2(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    n = relative_position
    ret = torch.zeros_like(n)
    if bidirectional:
        num_buckets //= 2
        ret = ret + (n > 0).long() * num_buckets
        n = n.abs()
    else:
        n = -torch.clamp(n, max=0)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    large = max_exact + (torch.log2(n.float().clamp(min=1) / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).long()
    large = torch.minimum(large, torch.full_like(large, num_buckets - 1))
    return ret + torch.where(is_small, n, large)


def b15_slopes_power_below_only(n):
    m = 2 ** math.floor(math.log2(n))
    return [2 ** (-8 * (h + 1) / m) for h in range(m)]


def b15_rope2d_alternating_pairs(x, rows, columns, base=10000.0):
    d = x.shape[-1]
    pairs = x.reshape(*x.shape[:-1], d // 2, 2)
    first = pairs[..., 0::2, :].flatten(-2)
    second = pairs[..., 1::2, :].flatten(-2)
    a = posenc.apply_rope(first, rows, base=base).reshape(*x.shape[:-1], d // 4, 2)
    b = posenc.apply_rope(second, columns, base=base).reshape(*x.shape[:-1], d // 4, 2)
    return torch.stack((a, b), -2).flatten(-3)


def b15_blocks_from_one(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(1, dim // 4 + 1, dtype=torch.float64) / dim)
    blocks = []
    for f in theta.tolist():
        for p in (row, column):
            a = torch.tensor(p * f, dtype=torch.float64)
            blocks.append(torch.stack([torch.stack([a.cos(), -a.sin()]), torch.stack([a.sin(), a.cos()])]))
    return torch.block_diag(*blocks)


def b15_recovery_floor_no_minus(o):
    return torch.floor(1.0 / o.double()).long()


def b15_counts_without_positions(positions, width):
    return (width, width, 3 * width)


def b15_concat_half_without_minus_one(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / half)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), -1)


def b15_rows_clip_one_early(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option == "clip":
        return table[torch.arange(length).clamp(max=table.shape[0] - 2)]
    return reference_extended_rows(table, length, option)


def b15_pi_factor_squared(dim, base, factor):
    return _b15_theta(dim, base) / factor ** 2


def b15_ntk_two_over_d_minus_two(dim, base, factor):
    return _b15_theta(dim, base * factor ** (2 / (dim - 2)))


def b15_dynamic_seq_len_minus_one(dim, base, factor, train_len, seq_len):
    length = max(seq_len - 1, train_len)
    scale = factor * length / train_len - (factor - 1)
    return _b15_theta(dim, base * scale ** (dim / (dim - 2)))


def b15_yarn_rounded_edges(dim, base, factor, train_len, beta_fast, beta_slow):
    def correction(r):
        return dim * math.log(train_len / (r * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(round(correction(beta_fast)), 0), min(round(correction(beta_slow)), dim - 1)
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / max(high - low, 1e-3)).clamp(0, 1)
    inv = _b15_theta(dim, base)
    return inv / factor * ramp + inv * (1 - ramp)


def b15_llama_geometric_blend(dim, base, factor, train_len, low, high):
    inv = _b15_theta(dim, base)
    smooth = ((train_len * inv / (2 * math.pi) - low) / (high - low)).clamp(0, 1)
    return inv / factor ** (1 - smooth)


HELDOUT_BATCH_15 = [
    Heldout("check_attention", "math.isqrt", b15_attention_isqrt, ("sqrt", "isqrt", "integer")),
    Heldout("check_cross_attention", "sqrt of w_k's input width", b15_cross_scale_input_width_of_keys,
            ("d_k", "w_k.shape[1]", "width of the projected keys")),
    Heldout("check_decayed_rows", "T inside and outside", b15_decay_steps_inside, ("per step", "exponent", "inside")),
    Heldout("check_decayed_rows", "(1 - lr)^T (1 - wd)^T", b15_decay_separate_factors,
            ("product", "lr wd", "(1 - lr)", "separate")),
    Heldout("check_alibi_bias_from_slopes", "float16", b15_alibi_from_slopes_half, ("precision", "float16", "dtype")),
    Heldout("check_alibi_bias_at_positions", "slopes sorted", b15_at_positions_slopes_sorted,
            ("order", "sorted", "its own slope", "head")),
    Heldout("check_reversal_gap", "relative gap", b15_gap_relative, ("relative", "divided", "normalis")),
    Heldout("check_linear_rope_attention", "denominator of keys only", b15_linear_denominator_keys_only,
            ("denominator",)),
    Heldout("check_linear_rope_attention", "divided by the count", b15_linear_divided_by_count,
            ("denominator", "count")),
    Heldout("check_decode_positions", "step 2", b15_decode_step_two, ("step",)),
    Heldout("check_expected_score", "offsets + 1", b15_expected_offsets_plus_one,
            ("offset", "shifted", "+1", "δ + 1")),
    Heldout("check_score_asymmetry", "normalised by |q||k|", b15_asymmetry_normalised,
            ("normalis", "divided", "|q|", "norm")),
    Heldout("check_slowest_wavelength", "b^((d - 1)/d)", b15_wavelength_d_minus_one, ("exponent", "1 - 2/d", "d - 2")),
    Heldout("check_apply_rope", "θ^m, not m θ", b15_rope_power_not_product,
            ("angle", "m θ", "m·θ", "product", "power")),
    Heldout("check_repeat_kv", "multi-query only", b15_kv_only_mqa, ("group", "h_kv", "h / h_kv")),
    Heldout("check_padded_positions", "counted over the flattened batch", b15_padded_flattened,
            ("each row", "batch", "flatten", "row by row")),
    Heldout("check_sinusoidal", "one row too many", b15_sinusoidal_one_more_row,
            ("one too many", "seq_len + 1", "includes its end")),
    Heldout("check_relative_shift", "j + r", b15_shift_row_index, ("lq - 1 - r", "row", "order", "revers")),
    Heldout("check_t5_bucket", "log2", b15_t5_log2, ("log", "natural", "logarithm")),
    Heldout("check_alibi_slopes", "only the power of two below", b15_slopes_power_below_only,
            ("one per head", "length", "slopes; expected")),
    Heldout("check_apply_rope_2d", "alternating pairs", b15_rope2d_alternating_pairs,
            ("halves", "first d/2", "alternat", "split")),
    Heldout("check_rope_matrix_2d_blocks", "ℓ from 1", b15_blocks_from_one, ("from 1", "θ'_0")),
    Heldout("check_position_recovery", "floor of 1/o", b15_recovery_floor_no_minus, ("- 1", "round", "floor")),
    Heldout("check_position_parameter_counts", "N left out", b15_counts_without_positions,
            ("n d", "positions", "times n", "does not use")),
    Heldout("check_concatenated_sinusoidal", "ℓ/(d/2)", b15_concat_half_without_minus_one,
            ("d/2 - 1", "1/b", "half - 1")),
    Heldout("check_extended_rows", "clip at L - 2", b15_rows_clip_one_early, ("l - 1", "last row", "clip")),
    Heldout("check_pi_frequencies", "s²", b15_pi_factor_squared, ("s²", "twice", "s^2", "square")),
    Heldout("check_ntk_frequencies", "s^(2/(d-2))", b15_ntk_two_over_d_minus_two,
            ("exponent", "d/(d - 2)", "d/(d-2)")),
    Heldout("check_dynamic_ntk_frequencies", "seq_len - 1", b15_dynamic_seq_len_minus_one,
            ("seq_len", "n - 1", "off by one", "one short")),
    Heldout("check_yarn_frequencies", "rounded band edges", b15_yarn_rounded_edges, ("floor", "ceil", "round")),
    Heldout("check_llama3_frequencies", "geometric blend", b15_llama_geometric_blend,
            ("linear", "blend", "geometric", "share")),
]


# =========================================================================== batch 16
# Written at about 19:42 UTC, after the generalisation that followed batch 15, from the exercises' statements only,
# without running any entry; measured once.


def _b16_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b16_attention_scores_after_mask_scale(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = (scores.softmax(-1) / math.sqrt(q.shape[-1]))
    return weights @ v, weights


def b16_attention_values_from_q(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v[..., : weights.shape[-1], :], weights


def b16_cross_softmax_temperature_dv(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_v.shape[1])
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def b16_decay_plus(initial, lr, weight_decay, steps):
    return initial * (1 + lr * weight_decay) ** steps


def b16_decay_int_steps_half(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay) ** (steps // 2 * 2)


def b16_alibi_from_slopes_key_position(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return -slopes[:, None, None] * pos[None, None, :].expand(len(slopes), length, length)


def b16_at_positions_index_distance_scaled(slopes, positions):
    p = positions.double()
    step = float(p[-1] - p[0]) / (len(p) - 1)
    idx = torch.arange(len(p), dtype=torch.float64)
    return -slopes.double()[:, None, None] * step * (idx[None, :] - idx[:, None]).abs()


def b16_gap_square(layer, x):
    return ((layer(x.flip(0)) - layer(x).flip(0)) ** 2).max().item()


def b16_unrotate_layout_half_both(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -positions, base=base, layout="half")


def b16_linear_phi_exp_minus(q, k, v, base=10000.0):
    pq, pk = torch.exp(-q.double()), torch.exp(-k.double())
    num = torch.tril(posenc.apply_rope(pq, base=base) @ posenc.apply_rope(pk, base=base).T)
    return num @ v.double() / torch.tril(pq @ pk.T).sum(-1, keepdim=True)


def b16_decode_list_plus_one(cache_len, num_new):
    return [cache_len + t + 1 for t in range(num_new)]


def b16_stream_sinks_at_end_of_window(cached, window, sinks=4):
    n = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., n - window:, :], torch.full((window,), -(n - window - sinks)))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2).flip(-2)


def b16_expected_base_squared(cross, offsets, base=10000.0):
    c = cross.double()
    angles = offsets.double()[:, None] * _b16_theta(2 * cross.shape[0], base ** 2)
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b16_asymmetry_cos_difference(query, key, offsets, base=10000.0):
    theta = _b16_theta(query.shape[-1], base)
    q, k = query.double(), key.double()
    real = q[0::2] * k[0::2] + q[1::2] * k[1::2]
    return (torch.cos(offsets.double()[:, None] * theta) - 1) @ real


def b16_head_target_times_base(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([float(target)]) / 2, base=base)[0]


def b16_wavelength_per_pair(dim, base):
    return 2 * math.pi * base ** (1 - 2 / dim) / (dim // 2)


def b16_rope_int_angles(x, positions=None, base=10000.0):
    n, d = x.shape[-2:]
    pos = torch.arange(n) if positions is None else positions
    angles = (pos.double()[:, None] * _b16_theta(d, base)).round()
    cos, sin = angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)
    xd = x.double()
    rotated = torch.stack((-xd[..., 1::2], xd[..., 0::2]), -1).flatten(-2)
    return (xd * cos + rotated * sin).to(x.dtype)


def b16_kv_groups_plus_one(kv, num_heads):
    groups = num_heads // kv.shape[-3]
    index = torch.arange(num_heads) // (groups + 1)
    return kv[..., index, :, :]


def b16_padded_start_at_zero(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return (torch.cumsum(mask, dim=1) - 1) * mask + padding_idx * (1 - mask)


def b16_sinusoidal_negative_angles(seq_len, dim, base=10000.0):
    angles = -torch.arange(seq_len, dtype=torch.float64)[:, None] * _b16_theta(dim, base)
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).float()


def b16_shaw_offset_twice(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + 2 * query_offset
    j = torch.arange(k_len)[None, :]
    return (j - i).clamp(-c, c) + c


def b16_shift_flip_rows(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    out = padded.reshape(*rel_logits.shape[:-2], lk + 1, lq)[..., 1:, :].reshape(rel_logits.shape)
    return out.flip(-2)


def b16_t5_buckets_not_halved_for_causal(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    if bidirectional:
        return posenc.t5_relative_position_bucket(relative_position, bidirectional=True, num_buckets=num_buckets,
                                                  max_distance=max_distance)
    return posenc.t5_relative_position_bucket(relative_position, bidirectional=False, num_buckets=num_buckets // 2,
                                              max_distance=max_distance)


def b16_slopes_as_exponents(n):
    return [-8 * (h + 1) / n for h in range(n)]


def b16_rope2d_half_frequencies(x, rows, columns, base=10000.0):
    d = x.shape[-1]
    freqs = posenc.rope_frequencies(d // 2, base) / 2
    first = posenc.apply_rope(x[..., : d // 2], rows, frequencies=freqs)
    second = posenc.apply_rope(x[..., d // 2:], columns, frequencies=freqs)
    return torch.cat((first, second), -1)


def b16_blocks_transposed_matrix(row, column, dim, base=10000.0):
    from posenc.exercises.rotations import reference_rope_matrix_2d_blocks

    return reference_rope_matrix_2d_blocks(row, column, dim, base).T


def b16_recovery_reversed(o):
    return (1.0 / o.double() - 1.0).round().long().flip(0)


def b16_counts_n_plus_d_table(positions, width):
    return ((positions + width) * width, positions * width, 3 * positions * width)


def b16_concat_cos_negative(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), -angles.cos()), -1)


def b16_rows_interpolate_floor_only(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option != "interpolate":
        return reference_extended_rows(table, length, option)
    where = torch.linspace(0, table.shape[0] - 1, length, dtype=torch.float64)
    return table[where.floor().long()]


def b16_pi_base_power(dim, base, factor):
    return _b16_theta(dim, base ** factor)


def b16_ntk_factor_minus_one(dim, base, factor):
    return _b16_theta(dim, base * (factor - 1) ** (dim / (dim - 2)))


def b16_dynamic_uses_train_len_only(dim, base, factor, train_len, seq_len):
    scale = factor * train_len / train_len - (factor - 1)
    return _b16_theta(dim, base * scale ** (dim / (dim - 2)))


def b16_yarn_no_floor_ceil(dim, base, factor, train_len, beta_fast, beta_slow):
    def correction(r):
        return dim * math.log(train_len / (r * 2 * math.pi)) / (2 * math.log(base))

    low, high = max(correction(beta_fast), 0), min(correction(beta_slow), dim - 1)
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / max(high - low, 1e-3)).clamp(0, 1)
    inv = _b16_theta(dim, base)
    return inv / factor * ramp + inv * (1 - ramp)


def b16_llama_all_divided(dim, base, factor, train_len, low, high):
    return _b16_theta(dim, base) / factor


HELDOUT_BATCH_16 = [
    Heldout("check_attention", "scaled after the softmax", b16_attention_scores_after_mask_scale,
            ("after the softmax", "before the softmax", "sum to 1", "scale")),
    Heldout("check_cross_attention", "sqrt(d_v)", b16_cross_softmax_temperature_dv,
            ("d_v", "width of the values", "d_k")),
    Heldout("check_decayed_rows", "1 + lr wd", b16_decay_plus, ("grow", "1 + lr wd", "sign", "minus")),
    Heldout("check_decayed_rows", "an even number of steps", b16_decay_int_steps_half,
            ("steps", "exponent", "t - 1", "whole number")),
    Heldout("check_alibi_bias_from_slopes", "key position only", b16_alibi_from_slopes_key_position,
            ("j - i", "key", "query", "offset")),
    Heldout("check_alibi_bias_at_positions", "average spacing", b16_at_positions_index_distance_scaled,
            ("evenly", "spacing", "p_j - p_i")),
    Heldout("check_reversal_gap", "squared differences", b16_gap_square, ("square", "abs", "absolute")),
    Heldout("check_unrotated_outputs", "half layout", b16_unrotate_layout_half_both, ("layout", "half", "pairs")),
    Heldout("check_linear_rope_attention", "exp(-x) features", b16_linear_phi_exp_minus, ("feature map", "elu")),
    Heldout("check_decode_positions", "a list from cache_len + 1", b16_decode_list_plus_one,
            ("start", "off by", "+1", "cache_len")),
    Heldout("check_streaming_cache", "cache reversed", b16_stream_sinks_at_end_of_window,
            ("order", "revers", "first", "flip")),
    Heldout("check_expected_score", "base squared", b16_expected_base_squared, ("base",)),
    Heldout("check_score_asymmetry", "cosine difference", b16_asymmetry_cos_difference,
            ("sine", "cos", "s(-δ)", "difference")),
    Heldout("check_positional_head_query", "half the target", b16_head_target_times_base,
            ("half", "target", "rotated by")),
    Heldout("check_slowest_wavelength", "divided by d/2", b16_wavelength_per_pair, ("d/2", "divided", "factor")),
    Heldout("check_apply_rope", "angles rounded", b16_rope_int_angles, ("round", "integer", "angle")),
    Heldout("check_repeat_kv", "group size + 1", b16_kv_groups_plus_one, ("group", "h / h_kv", "g // ")),
    Heldout("check_padded_positions", "real tokens from padding_idx", b16_padded_start_at_zero,
            ("off by", "padding_idx + 1", "start")),
    Heldout("check_sinusoidal", "negative angles", b16_sinusoidal_negative_angles,
            ("sign", "negative", "minus", "-i")),
    Heldout("check_shaw_index", "offset counted twice", b16_shaw_offset_twice, ("query_offset", "twice", "offset")),
    Heldout("check_relative_shift", "rows flipped", b16_shift_flip_rows, ("row", "revers", "order", "flip")),
    Heldout("check_t5_bucket", "causal buckets halved", b16_t5_buckets_not_halved_for_causal,
            ("causal", "bidirectional", "half", "num_buckets")),
    Heldout("check_alibi_slopes", "exponents, not slopes", b16_slopes_as_exponents,
            ("exponent", "2^", "power", "negative")),
    Heldout("check_apply_rope_2d", "frequencies halved", b16_rope2d_half_frequencies,
            ("frequenc", "1/2", "half", "factor")),
    Heldout("check_rope_matrix_2d_blocks", "matrix transposed", b16_blocks_transposed_matrix,
            ("transpos", "wrong way", "direction")),
    Heldout("check_position_recovery", "reversed", b16_recovery_reversed, ("order", "revers", "flip")),
    Heldout("check_position_parameter_counts", "(N + d) d for the table", b16_counts_n_plus_d_table,
            ("part 1", "n d", "table")),
    Heldout("check_concatenated_sinusoidal", "cosines negated", b16_concat_cos_negative,
            ("sign", "cos", "negat", "minus")),
    Heldout("check_extended_rows", "interpolate by floor", b16_rows_interpolate_floor_only,
            ("blend", "linear", "floor", "nearest")),
    Heldout("check_pi_frequencies", "base^s", b16_pi_base_power, ("base", "divide", "every frequency")),
    Heldout("check_ntk_frequencies", "s - 1", b16_ntk_factor_minus_one, ("s - 1", "factor", "s^(d/(d-2))")),
    Heldout("check_dynamic_ntk_frequencies", "seq_len unused", b16_dynamic_uses_train_len_only,
            ("seq_len", "does not use", "static")),
    Heldout("check_yarn_frequencies", "no floor or ceil", b16_yarn_no_floor_ceil, ("floor", "ceil", "round", "edge")),
    Heldout("check_llama3_frequencies", "every pair divided", b16_llama_all_divided,
            ("every pair", "all", "fast", "kept", "pi")),
]


# =========================================================================== batch 17
# Written at about 19:44 UTC, after the generalisation that followed batch 16, from the exercises' statements only,
# without running any entry; measured once.


def _b17_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b17_attention_causal_always(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    causal = torch.ones(scores.shape[-2:], dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def b17_attention_mean_values(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return v.mean(-2, keepdim=True).expand(*weights.shape[:-1], v.shape[-1]), weights


def b17_cross_softmax_over_queries(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return torch.softmax(scores, 0) @ (z @ w_v)


def b17_decay_one_minus_lr_wd_to_steps_plus(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay) ** steps - lr * weight_decay * initial


def b17_alibi_from_slopes_offset_by_one_row(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return slopes[:, None, None] * (pos[None, :] - pos[:, None] - 1).clamp(max=0)


def b17_at_positions_transposed_heads(slopes, positions):
    p = positions.double()
    return (-slopes.double()[:, None, None] * (p[None, :] - p[:, None]).abs()).transpose(0, 1)


def b17_gap_mean(layer, x):
    return (layer(x.flip(0)) - layer(x).flip(0)).abs().mean().item()


def b17_linear_softmax_normalised(q, k, v, base=10000.0):
    pq, pk = torch.nn.functional.elu(q.double()) + 1, torch.nn.functional.elu(k.double()) + 1
    num = torch.tril(posenc.apply_rope(pq, base=base) @ posenc.apply_rope(pk, base=base).T)
    return num.masked_fill(num == 0, float("-inf")).softmax(-1) @ v.double()


def b17_decode_cumulative(cache_len, num_new):
    return torch.arange(num_new).cumsum(0) + cache_len


def b17_stream_window_from_start(cached, window, sinks=4):
    moved = cached[..., sinks:sinks + window, :]
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b17_expected_cross_not_transposed_sum(cross, offsets, base=10000.0):
    c = cross.double()
    angles = offsets.double()[:, None] * _b17_theta(2 * cross.shape[0], base)
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1]) + (
        c[:, 0, 1] + c[:, 1, 0]).sum()


def b17_asymmetry_twice_sum(query, key, offsets, base=10000.0):
    theta = _b17_theta(query.shape[-1], base)
    q, k = query.double(), key.double()
    return -4 * torch.sin(offsets.double()[:, None] * theta) @ (q[0::2] * k[1::2] - q[1::2] * k[0::2])


def b17_head_unit_key(key, target, base=10000.0):
    unit = torch.zeros_like(key)
    unit[0] = 1.0
    return posenc.apply_rope(unit[None], torch.tensor([target]), base=base)[0]


def b17_wavelength_log_base(dim, base):
    return 2 * math.pi * math.log(base) * (1 - 2 / dim)


def b17_rope_half_pairs_only(x, positions=None, base=10000.0):
    d = x.shape[-1]
    rotated = posenc.apply_rope(x[..., : d // 2], positions, base=base)
    return torch.cat((rotated, x[..., d // 2:]), -1)


def b17_kv_expand_without_reshape(kv, num_heads):
    groups = num_heads // kv.shape[-3]
    return kv[..., :, None, :, :].expand(*kv.shape[:-2], groups, *kv.shape[-2:])


def b17_padded_cumsum_on_ids(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return (input_ids * mask).cumsum(1) * mask + padding_idx


def b17_sinusoidal_cos_sin_per_half_pairs(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b17_theta(dim, base)
    table = torch.zeros(seq_len, dim, dtype=torch.float64)
    table[:, 0::2] = angles.sin()
    table[:, 1::2] = angles.cos()
    table[:, -1] = 0.0
    return table.float()


def b17_shaw_no_clip_above(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return (j - i).clamp(min=-c) + c


def b17_shift_without_memory_offset(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    out = torch.zeros_like(rel_logits)
    for r in range(lq):
        for j in range(lk):
            col = j + lk - 1 - (lk - lq + r) - (lk - lq)
            if 0 <= col < lk:
                out[..., r, j] = rel_logits[..., r, col]
    return out


def b17_t5_max_distance_halved(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return posenc.t5_relative_position_bucket(relative_position, bidirectional=bidirectional,
                                              num_buckets=num_buckets, max_distance=max_distance // 2)


def b17_slopes_two_to_minus_8_over_h(n):
    return [2 ** (-8 / (h + 1)) for h in range(n)]


def b17_rope2d_positions_swapped_in_second_case(x, rows, columns, base=10000.0):
    return posenc.apply_rope_2d(x, columns, rows, base=base)


def b17_blocks_dim_half(row, column, dim, base=10000.0):
    from posenc.exercises.rotations import reference_rope_matrix_2d_blocks

    small = reference_rope_matrix_2d_blocks(row, column, dim // 2, base)
    return torch.block_diag(small, torch.eye(dim // 2, dtype=torch.float64))


def b17_recovery_from_sum(o):
    positions = (1 / o.double() - 1).round().long()
    return positions + (positions > 100).long()


def b17_counts_d_squared_plus(positions, width):
    return (positions * width, positions * width + width * width, 3 * positions * width)


def b17_concat_seq_len_as_dim(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (seq_len / 2 - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), -1)


def b17_rows_copy_reflect(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option != "copy":
        return reference_extended_rows(table, length, option)
    rows = table.shape[0]
    m = torch.arange(length)
    period = m % (2 * rows)
    return table[torch.where(period < rows, period, 2 * rows - 1 - period)]


def b17_pi_factor_plus_one(dim, base, factor):
    return _b17_theta(dim, base) / (factor + 1)


def b17_ntk_factor_in_exponent_numerator(dim, base, factor):
    return _b17_theta(dim, base * factor ** (dim * dim / (dim - 2)))


def b17_dynamic_floor_at_factor(dim, base, factor, train_len, seq_len):
    length = max(seq_len, factor * train_len)
    scale = factor * length / train_len - (factor - 1)
    return _b17_theta(dim, base * scale ** (dim / (dim - 2)))


def b17_yarn_interpolation_not_divided(dim, base, factor, train_len, beta_fast, beta_slow):
    freqs = posenc.yarn_frequencies(dim, base, factor=factor, original_max_position=train_len,
                                    beta_fast=beta_fast, beta_slow=beta_slow)[0]
    theta = _b17_theta(dim, base)
    return torch.where(torch.isclose(freqs, theta / factor), theta, freqs)


def b17_llama_smooth_squared(dim, base, factor, train_len, low, high):
    inv = _b17_theta(dim, base)
    smooth = ((train_len * inv / (2 * math.pi) - low) / (high - low)).clamp(0, 1) ** 2
    return (1 - smooth) * inv / factor + smooth * inv


HELDOUT_BATCH_17 = [
    Heldout("check_attention", "a causal mask always", b17_attention_causal_always,
            ("causal", "future", "mask")),
    Heldout("check_attention", "mean of the values", b17_attention_mean_values,
            ("weights @ v", "average", "weights", "does not use")),
    Heldout("check_cross_attention", "softmax over the queries", b17_cross_softmax_over_queries,
            ("queries", "dim=0", "axis", "over the keys")),
    Heldout("check_decayed_rows", "an extra step subtracted", b17_decay_one_minus_lr_wd_to_steps_plus,
            ("extra", "step", "subtract", "t + 1")),
    Heldout("check_alibi_bias_from_slopes", "offsets shifted on the diagonal", b17_alibi_from_slopes_offset_by_one_row,
            ("diagonal", "j - i", "off by", "-1")),
    Heldout("check_alibi_bias_at_positions", "heads and rows swapped", b17_at_positions_transposed_heads,
            ("axis", "heads", "permuted", "transpos")),
    Heldout("check_reversal_gap", "mean", b17_gap_mean, ("mean", "largest", "max")),
    Heldout("check_linear_rope_attention", "softmax of the rotated scores", b17_linear_softmax_normalised,
            ("softmax", "denominator", "feature")),
    Heldout("check_decode_positions", "cumulative sum", b17_decode_cumulative, ("step", "cumsum", "one apart")),
    Heldout("check_streaming_cache", "window from the start", b17_stream_window_from_start,
            ("last", "window", "positions")),
    Heldout("check_expected_score", "a constant added", b17_expected_cross_not_transposed_sum,
            ("constant", "offset", "same amount", "c12 + c21")),
    Heldout("check_score_asymmetry", "factor 4", b17_asymmetry_twice_sum, ("factor", "2", "twice")),
    Heldout("check_positional_head_query", "a unit vector rotated", b17_head_unit_key,
            ("key", "does not use", "not the key")),
    Heldout("check_slowest_wavelength", "log of the base", b17_wavelength_log_base, ("log", "power", "b^")),
    Heldout("check_apply_rope", "first half only", b17_rope_half_pairs_only, ("half", "every pair", "not rotated")),
    Heldout("check_repeat_kv", "expand without reshape", b17_kv_expand_without_reshape,
            ("reshape", "axis", "extra")),
    Heldout("check_padded_positions", "ids summed", b17_padded_cumsum_on_ids, ("mask", "count", "ids")),
    Heldout("check_sinusoidal", "last column zeroed", b17_sinusoidal_cos_sin_per_half_pairs,
            ("last column", "column", "cos")),
    Heldout("check_shaw_index", "no upper clip", b17_shaw_no_clip_above, ("clip", "2c", "outside")),
    Heldout("check_relative_shift", "memory subtracted twice", b17_shift_without_memory_offset,
            ("memory", "lq == lk", "lk - lq")),
    Heldout("check_t5_bucket", "max_distance halved", b17_t5_max_distance_halved, ("max_distance",)),
    Heldout("check_alibi_slopes", "2^(-8/h)", b17_slopes_two_to_minus_8_over_h, ("8h/n", "exponent", "8/n")),
    Heldout("check_apply_rope_2d", "rows and columns swapped", b17_rope2d_positions_swapped_in_second_case,
            ("swapped", "rows", "columns")),
    Heldout("check_rope_matrix_2d_blocks", "d/2 and an identity", b17_blocks_dim_half,
            ("identity", "d/2", "not rotated", "frequenc")),
    Heldout("check_position_recovery", "off by one beyond 100", b17_recovery_from_sum, ("off by", "+1", "100")),
    Heldout("check_position_parameter_counts", "+d² in part 2", b17_counts_d_squared_plus,
            ("d²", "word embedding", "whole map")),
    Heldout("check_concatenated_sinusoidal", "seq_len as the dimension", b17_concat_seq_len_as_dim,
            ("seq_len", "dim", "d/2 - 1")),
    Heldout("check_extended_rows", "copy reflected", b17_rows_copy_reflect, ("mod", "reflect", "copy", "wrap")),
    Heldout("check_pi_frequencies", "s + 1", b17_pi_factor_plus_one, ("s + 1", "factor", "divide")),
    Heldout("check_ntk_frequencies", "d²/(d - 2)", b17_ntk_factor_in_exponent_numerator,
            ("exponent", "d/(d - 2)", "d/(d-2)")),
    Heldout("check_dynamic_ntk_frequencies", "floor at s L", b17_dynamic_floor_at_factor,
            ("max", "training length", "seq_len", "floor")),
    Heldout("check_yarn_frequencies", "divided pairs kept", b17_yarn_interpolation_not_divided,
            ("divide", "θ_ℓ / s", "slow")),
    Heldout("check_llama3_frequencies", "share squared", b17_llama_smooth_squared, ("linear", "blend", "share")),
]


# =========================================================================== batch 18
# Written at about 19:53 UTC, after the last change to the diagnosis (the generalisation that followed batch 17), from
# the exercises' statements only, without running any entry; measured once and not generalised from: the last honest
# measure of this session.


def _b18_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b18_attention_keys_as_values(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ (v + 1.0), weights


def b18_cross_no_softmax(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return scores @ (z @ w_v)


def b18_decay_steps_float32(initial, lr, weight_decay, steps):
    factor = torch.tensor(1 - lr * weight_decay, dtype=torch.float32) ** steps
    return initial * factor.double()


def b18_alibi_from_slopes_scaled_by_length(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return slopes[:, None, None] * (pos[None, :] - pos[:, None]) * length / 8


def b18_at_positions_square_root(slopes, positions):
    p = positions.double()
    return -slopes.double()[:, None, None] * (p[None, :] - p[:, None]).abs().sqrt()


def b18_gap_first_row(layer, x):
    return (layer(x.flip(0)) - layer(x).flip(0))[0].abs().max().item()


def b18_unrotate_positions_halved(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -positions // 2, base=base)


def b18_linear_keys_rotated_twice(q, k, v, base=10000.0):
    pq, pk = torch.nn.functional.elu(q.double()) + 1, torch.nn.functional.elu(k.double()) + 1
    rk = posenc.apply_rope(posenc.apply_rope(pk, base=base), base=base)
    num = torch.tril(posenc.apply_rope(pq, base=base) @ rk.T)
    return num @ v.double() / torch.tril(pq @ pk.T).sum(-1, keepdim=True)


def b18_decode_from_num_new(cache_len, num_new):
    return torch.arange(num_new, num_new + num_new) + cache_len - num_new + (cache_len > 10)


def b18_stream_last_key_dropped(cached, window, sinks=4):
    n = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., n - window - 1:n - 1, :], torch.full((window,), -(n - window - sinks - 1)))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b18_expected_trace_only_first_pair(cross, offsets, base=10000.0):
    c = cross.double()
    angles = offsets.double()[:, None] * _b18_theta(2 * cross.shape[0], base)
    return angles.cos()[:, 0] * (c[0, 0, 0] + c[0, 1, 1]) + angles.sin()[:, 0] * (c[0, 1, 0] - c[0, 0, 1])


def b18_asymmetry_offsets_squared(query, key, offsets, base=10000.0):
    theta = _b18_theta(query.shape[-1], base)
    q, k = query.double(), key.double()
    return -2 * torch.sin(offsets.double()[:, None] ** 2 * theta) @ (q[0::2] * k[1::2] - q[1::2] * k[0::2])


def b18_head_target_mod(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([target % 100]), base=base)[0]


def b18_wavelength_two_pi_over_b(dim, base):
    return 2 * math.pi / base ** (2 / dim - 1) / 2


def b18_rope_positions_scaled(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    return posenc.apply_rope(x, pos * 1.5, base=base)


def b18_kv_group_from_num_heads_only(kv, num_heads):
    return kv.repeat_interleave(max(num_heads // 4, 1), dim=-3)[..., :num_heads, :, :]


def b18_padded_double_count(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return torch.cumsum(mask, dim=1) * 2 * mask + padding_idx


def b18_sinusoidal_base_exponent_dim_plus(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b18_theta(dim + 2, base)
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).float()


def b18_shaw_rows_reversed(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return 2 * c - ((j - i).clamp(-c, c) + c)


def b18_shift_zero_column_kept_first(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    return padded[..., :lk]


def b18_t5_num_buckets_fixed(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return posenc.t5_relative_position_bucket(relative_position, bidirectional=bidirectional, num_buckets=32,
                                              max_distance=max_distance)


def b18_slopes_ratio_squared(n):
    start = 2 ** (-8 / n)
    return [start * start ** (2 * h) for h in range(n)]


def b18_rope2d_columns_doubled(x, rows, columns, base=10000.0):
    return posenc.apply_rope_2d(x, rows, 2 * columns, base=base)


def b18_blocks_sin_sign_both(row, column, dim, base=10000.0):
    from posenc.exercises.rotations import reference_rope_matrix_2d_blocks

    matrix = reference_rope_matrix_2d_blocks(row, column, dim, base)
    return matrix.abs()


def b18_recovery_one_over_o_squared(o):
    return (1.0 / o.double() ** 2 - 1.0).round().long()


def b18_counts_times_two(positions, width):
    return (2 * positions * width, 2 * positions * width, 6 * positions * width)


def b18_concat_base_ladder_over_half(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-2 * torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), -1)


def b18_rows_clip_first_row(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option == "clip":
        m = torch.arange(length)
        return table[torch.where(m < table.shape[0], m, torch.zeros_like(m))]
    return reference_extended_rows(table, length, option)


def b18_pi_sqrt_factor(dim, base, factor):
    return _b18_theta(dim, base) / math.sqrt(factor)


def b18_dynamic_scale_squared(dim, base, factor, train_len, seq_len):
    length = max(seq_len, train_len)
    scale = (factor * length / train_len - (factor - 1)) ** 2
    return _b18_theta(dim, base * scale ** (dim / (dim - 2)))


def b18_llama_wavelength_in_pairs(dim, base, factor, train_len, low, high):
    inv = _b18_theta(dim, base)
    smooth = ((train_len / (1 / inv) - low) / (high - low)).clamp(0, 1)
    return (1 - smooth) * inv / factor + smooth * inv


HELDOUT_BATCH_18 = [
    Heldout("check_attention", "v + 1", b18_attention_keys_as_values, ("values", "weights @ v", "output")),
    Heldout("check_cross_attention", "no softmax", b18_cross_no_softmax, ("softmax", "sum to 1")),
    Heldout("check_decayed_rows", "factor in float32", b18_decay_steps_float32, ("float32", "precision", "float64")),
    Heldout("check_alibi_bias_from_slopes", "times length / 8", b18_alibi_from_slopes_scaled_by_length,
            ("length", "factor", "times")),
    Heldout("check_alibi_bias_at_positions", "square root of the distance", b18_at_positions_square_root,
            ("square root", "sqrt", "power", "distance")),
    Heldout("check_reversal_gap", "first row only", b18_gap_first_row, ("row", "every position", "largest")),
    Heldout("check_unrotated_outputs", "positions halved by //", b18_unrotate_positions_halved,
            ("half", "halved", "//", "position")),
    Heldout("check_linear_rope_attention", "keys rotated twice", b18_linear_keys_rotated_twice,
            ("twice", "rotat", "keys")),
    Heldout("check_decode_positions", "off by one for long caches", b18_decode_from_num_new,
            ("off by", "start", "cache_len")),
    Heldout("check_streaming_cache", "last key dropped", b18_stream_last_key_dropped, ("last", "window", "keys at")),
    Heldout("check_expected_score", "first pair only", b18_expected_trace_only_first_pair,
            ("sum over", "every pair", "first pair", "pairs")),
    Heldout("check_score_asymmetry", "offsets squared", b18_asymmetry_offsets_squared, ("offset", "δ²", "square")),
    Heldout("check_positional_head_query", "target mod 100", b18_head_target_mod, ("target", "rotated by", "mod")),
    Heldout("check_slowest_wavelength", "π b^(1 - 2/d)", b18_wavelength_two_pi_over_b, ("2π", "π", "factor 2")),
    Heldout("check_apply_rope", "positions times 1.5", b18_rope_positions_scaled, ("position", "scaled", "1.5")),
    Heldout("check_repeat_kv", "group from num_heads only", b18_kv_group_from_num_heads_only,
            ("h / h_kv", "group", "h_kv", "times")),
    Heldout("check_padded_positions", "counts doubled", b18_padded_double_count, ("twice", "2", "count", "step")),
    Heldout("check_sinusoidal", "dim + 2 in the exponent", b18_sinusoidal_base_exponent_dim_plus,
            ("dim", "exponent", "d + 2", "frequenc")),
    Heldout("check_shaw_index", "rows reversed", b18_shaw_rows_reversed, ("sign", "i - j", "revers")),
    Heldout("check_relative_shift", "padded, not shifted", b18_shift_zero_column_kept_first,
            ("shift", "reshape", "padding", "unshifted")),
    Heldout("check_t5_bucket", "num_buckets fixed", b18_t5_num_buckets_fixed, ("num_buckets",)),
    Heldout("check_alibi_slopes", "ratio squared", b18_slopes_ratio_squared, ("ratio", "step", "geometric")),
    Heldout("check_apply_rope_2d", "columns doubled", b18_rope2d_columns_doubled, ("column", "twice", "doubled")),
    Heldout("check_rope_matrix_2d_blocks", "absolute values", b18_blocks_sin_sign_both,
            ("sign", "abs", "rotation", "-sin")),
    Heldout("check_position_recovery", "1/o²", b18_recovery_one_over_o_squared, ("1/o", "square", "o²")),
    Heldout("check_position_parameter_counts", "everything doubled", b18_counts_times_two,
            ("2 times", "factor 2", "twice", "2N d")),
    Heldout("check_concatenated_sinusoidal", "2ℓ/(d/2 - 1)", b18_concat_base_ladder_over_half,
            ("d/2 - 1", "exponent", "factor 2", "ladder")),
    Heldout("check_extended_rows", "clip to row 0", b18_rows_clip_first_row, ("last row", "l - 1", "row 0", "clip")),
    Heldout("check_pi_frequencies", "√s", b18_pi_sqrt_factor, ("√s", "sqrt", "square root", "s^0.5")),
    Heldout("check_dynamic_ntk_frequencies", "scale squared", b18_dynamic_scale_squared,
            ("scale", "squared", "s_n")),
    Heldout("check_llama3_frequencies", "wavelength without 2π", b18_llama_wavelength_in_pairs, ("2π",)),
]


# --------------------------------------------------------------------------- batch 19 (issue 32, third pass)
# Written at about 22:17 UTC on 2026-11-28, after the generic readings of posenc.exercises._transforms, from the
# exercises' statements and the reference functions, without running any entry; keywords fixed before the run.


def _b19_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b19_attention_scale_by_keys(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def b19_attention_mask_fill_zero(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    weights = scores.softmax(-1)
    return weights @ v, weights


def b19_cross_scale_by_value_width(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_v.shape[1])
    return scores.softmax(-1) @ (z @ w_v)


def b19_cross_softmax_then_scale(y, z, w_q, w_k, w_v):
    weights = ((y @ w_q) @ (z @ w_k).T).softmax(-1) / math.sqrt(w_k.shape[1])
    return weights @ (z @ w_v)


def b19_decay_one_step_more(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay) ** (steps + 1)


def b19_decay_lr_forgotten(initial, lr, weight_decay, steps):
    return initial * (1 - weight_decay) ** steps


def b19_alibi_i_minus_j(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return slopes[:, None, None] * (pos[:, None] - pos[None, :])


def b19_alibi_slopes_reversed(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return slopes.flip(0)[:, None, None] * (pos[None, :] - pos[:, None])


def b19_at_positions_long(slopes, positions):
    p = positions.long().double()
    return -slopes.double()[:, None, None] * (p[None, :] - p[:, None]).abs()


def b19_at_positions_index(slopes, positions):
    p = torch.arange(len(positions), dtype=torch.float64)
    return -slopes.double()[:, None, None] * (p[None, :] - p[:, None]).abs()


def b19_gap_sum_not_max(layer, x):
    reversal = torch.arange(x.shape[0] - 1, -1, -1)
    return (layer(x[reversal]) - layer(x)[reversal]).abs().sum().item()


def b19_gap_no_abs(layer, x):
    reversal = torch.arange(x.shape[0] - 1, -1, -1)
    return (layer(x[reversal]) - layer(x)[reversal]).max().item()


def b19_unrotate_plus_one(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -(positions + 1), base=base)


def b19_unrotate_base_squared(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -positions, base=base**2)


def b19_linear_no_tril(q, k, v, base=10000.0):
    phi_q, phi_k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    num = posenc.apply_rope(phi_q, base=base) @ posenc.apply_rope(phi_k, base=base).transpose(-1, -2)
    den = torch.tril(phi_q @ phi_k.transpose(-1, -2)).sum(-1, keepdim=True)
    return num @ v / den


def b19_linear_relu_features(q, k, v, base=10000.0):
    phi_q, phi_k = torch.relu(q) + 1, torch.relu(k) + 1
    num = torch.tril(posenc.apply_rope(phi_q, base=base) @ posenc.apply_rope(phi_k, base=base).transpose(-1, -2))
    den = torch.tril(phi_q @ phi_k.transpose(-1, -2)).sum(-1, keepdim=True)
    return num @ v / den


def b19_decode_plus_one(cache_len, num_new):
    return torch.arange(cache_len + 1, cache_len + num_new + 1)


def b19_decode_minus_one(cache_len, num_new):
    return torch.arange(num_new) + cache_len - 1


def b19_stream_shift_plus_one(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks + 1
    moved = posenc.apply_rope(cached[..., total - window:, :], torch.full((window,), -shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b19_stream_forward(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    moved = posenc.apply_rope(cached[..., total - window:, :], torch.full((window,), shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b19_expected_cos_only(cross, offsets, base=10000.0):
    dim = 2 * cross.shape[0]
    angles = offsets.double()[:, None] * _b19_theta(dim, base)
    c = cross.double()
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1])


def b19_expected_dim_from_cross(cross, offsets, base=10000.0):
    dim = cross.shape[0]
    theta = base ** (-2 * torch.arange(cross.shape[0], dtype=torch.float64) / dim)
    angles = offsets.double()[:, None] * theta
    c = cross.double()
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b19_asymmetry_no_two(query, key, offsets, base=10000.0):
    theta = _b19_theta(query.shape[-1], base)
    q, k = query.double(), key.double()
    return -torch.sin(offsets.double()[:, None] * theta) @ (q[0::2] * k[1::2] - q[1::2] * k[0::2])


def b19_asymmetry_halves(query, key, offsets, base=10000.0):
    half = query.shape[-1] // 2
    theta = _b19_theta(query.shape[-1], base)
    q, k = query.double(), key.double()
    imag = q[:half] * k[half:] - q[half:] * k[:half]
    return -2 * torch.sin(offsets.double()[:, None] * theta) @ imag


def b19_head_target_plus_one(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([target + 1]), base=base)[0]


def b19_wavelength_dim_minus_one(dim, base):
    return 2 * math.pi * base ** (1 - 2 / (dim - 1))


def b19_wavelength_no_two_pi_but_pi(dim, base):
    return math.pi * base ** ((dim - 2) / dim)


def b19_rope_positions_minus_one(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    return posenc.apply_rope(x, pos - 1, base=base)


def b19_rope_exponent_without_two(x, positions=None, base=10000.0):
    dim = x.shape[-1]
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    theta = base ** (-torch.arange(dim // 2, dtype=torch.float64) / dim)
    return posenc.apply_rope(x, pos, frequencies=theta)


def b19_kv_one_extra(kv, num_heads):
    group = num_heads // kv.shape[-3]
    return kv.repeat_interleave(group + 1, dim=-3)[..., :num_heads, :, :]


def b19_padded_arange_masked(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    steps = torch.arange(1, input_ids.shape[-1] + 1)
    return steps * mask + padding_idx


def b19_padded_from_padding_idx(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return torch.cumsum(mask, dim=-1) * mask + padding_idx - 1


def b19_sinusoidal_no_minus(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] / _b19_theta(dim, base)
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).float()


def b19_sinusoidal_positions_from_one(seq_len, dim, base=10000.0):
    angles = torch.arange(1, seq_len + 1, dtype=torch.float64)[:, None] * _b19_theta(dim, base)
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).float()


def b19_shaw_upper_short(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return (j - i).clamp(-c, c - 1) + c


def b19_shaw_offset_ignored(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None]
    j = torch.arange(k_len)[None, :]
    return (j - i).clamp(-c, c) + c


def b19_shift_pad_right(rel_logits):
    *lead, lq, lk = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (0, 1))
    return padded.reshape(*lead, lk + 1, lq)[..., 1:, :].reshape(*lead, lq, lk)


def b19_t5_max_distance_doubled(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return posenc.t5_relative_position_bucket(relative_position, bidirectional, num_buckets, 2 * max_distance)


def b19_slopes_integer_step(n):
    step = 8 // n
    return [2.0 ** (-step * h) for h in range(1, n + 1)]


def b19_rope2d_rows_twice(x, rows, columns, base=10000.0):
    return posenc.apply_rope_2d(x, rows, rows, base=base)


def b19_blocks_column_uses_row(row, column, dim, base=10000.0):
    from posenc.exercises.rotations import reference_rope_matrix_2d_blocks

    return reference_rope_matrix_2d_blocks(row, row, dim, base)


def b19_blocks_exponent_two(row, column, dim, base=10000.0):
    from posenc.exercises.rotations import reference_rope_matrix_2d_blocks

    return reference_rope_matrix_2d_blocks(row, column, dim, base ** 0.5)


def b19_recovery_reciprocal_only(o):
    return torch.round(1 / o.double()).long()


def b19_counts_width_squared(positions, width):
    return (positions * width, positions * width + width * width, 3 * positions * width)


def b19_concat_positions_from_one(seq_len, dim, base=10000.0):
    from posenc.exercises.foundations import reference_concatenated_sinusoidal

    return reference_concatenated_sinusoidal(seq_len + 1, dim, base)[1:]


def b19_rows_clip_one_short(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option == "clip":
        m = torch.arange(length)
        return table[m.clamp(max=table.shape[0] - 2)]
    return reference_extended_rows(table, length, option)


def b19_pi_first_pair_kept(dim, base, factor):
    theta = _b19_theta(dim, base) / factor
    theta[0] = theta[0] * factor
    return theta


def b19_pi_exponent_on_factor(dim, base, factor):
    return _b19_theta(dim, base) / factor ** (2 / dim)


def b19_ntk_d_minus_one(dim, base, factor):
    return _b19_theta(dim, base * factor ** (dim / (dim - 1)))


def b19_ntk_factor_squared(dim, base, factor):
    return _b19_theta(dim, base * (factor ** 2) ** (dim / (dim - 2)))


def b19_dynamic_seq_len_plus_one(dim, base, factor, train_len, seq_len):
    n = max(seq_len + 1, train_len)
    scale = factor * n / train_len - (factor - 1)
    return _b19_theta(dim, base * scale ** (dim / (dim - 2)))


def b19_llama_factor_squared(dim, base, factor, train_len, low, high):
    return posenc.llama3_frequencies(dim, base, factor=factor ** 2, original_max_position=train_len,
                                     low_freq_factor=low, high_freq_factor=high)


HELDOUT_BATCH_19 = [
    Heldout("check_attention", "scaled by sqrt(Lk)", b19_attention_scale_by_keys, ("scal", "sqrt", "√", "k.shape[-2]")),
    Heldout("check_attention", "masked scores set to 0", b19_attention_mask_fill_zero, ("-inf", "mask", "masked")),
    Heldout("check_cross_attention", "scaled by the value width", b19_cross_scale_by_value_width,
            ("scal", "sqrt", "√", "w_v")),
    Heldout("check_cross_attention", "scale after softmax", b19_cross_softmax_then_scale,
            ("sum to 1", "softmax", "scal", "after")),
    Heldout("check_decayed_rows", "one step more", b19_decay_one_step_more, ("steps + 1", "one more", "t + 1",
                                                                            "off-by-one")),
    Heldout("check_decayed_rows", "lr forgotten", b19_decay_lr_forgotten, ("lr", "learning rate")),
    Heldout("check_alibi_bias_from_slopes", "i - j", b19_alibi_i_minus_j, ("i - j", "sign", "opposite")),
    Heldout("check_alibi_bias_from_slopes", "slopes reversed", b19_alibi_slopes_reversed,
            ("reverse", "order", "flip", "head")),
    Heldout("check_alibi_bias_at_positions", "positions cast to long", b19_at_positions_long,
            ("integer", "round", "long", "trunc")),
    Heldout("check_alibi_bias_at_positions", "token indices", b19_at_positions_index,
            ("positions", "index", "does not use")),
    Heldout("check_reversal_gap", "sum, not max", b19_gap_sum_not_max, ("sum", "max", "largest")),
    Heldout("check_reversal_gap", "no abs", b19_gap_no_abs, ("abs", "absolute", "sign")),
    Heldout("check_unrotated_outputs", "positions + 1", b19_unrotate_plus_one, ("+ 1", "one more", "off-by-one",
                                                                               "off by one")),
    Heldout("check_unrotated_outputs", "base squared", b19_unrotate_base_squared, ("base²", "squared", "base")),
    Heldout("check_linear_rope_attention", "numerator not causal", b19_linear_no_tril,
            ("causal", "tril", "future", "later keys")),
    Heldout("check_linear_rope_attention", "relu + 1 features", b19_linear_relu_features,
            ("feature", "elu", "relu", "φ")),
    Heldout("check_decode_positions", "from cache_len + 1", b19_decode_plus_one, ("+ 1", "one more", "off-by-one",
                                                                                 "cache_len + 1")),
    Heldout("check_decode_positions", "from cache_len - 1", b19_decode_minus_one, ("- 1", "one less", "off-by-one",
                                                                                  "cache_len - 1")),
    Heldout("check_streaming_cache", "shift one too many", b19_stream_shift_plus_one,
            ("one more", "+ 1", "off-by-one", "shift")),
    Heldout("check_streaming_cache", "rotated forward", b19_stream_forward, ("forward", "sign", "wrong way",
                                                                            "opposite", "direction")),
    Heldout("check_expected_score", "cosine term only", b19_expected_cos_only, ("sin", "sine")),
    Heldout("check_expected_score", "d = number of pairs", b19_expected_dim_from_cross,
            ("d/2", "dimension", "exponent", "pairs")),
    Heldout("check_score_asymmetry", "factor 2 missing", b19_asymmetry_no_two, ("factor 2", "1/2", "twice")),
    Heldout("check_score_asymmetry", "halves layout", b19_asymmetry_halves, ("halves", "layout", "interleav",
                                                                            "pairs")),
    Heldout("check_positional_head_query", "target + 1", b19_head_target_plus_one, ("+ 1", "off by one",
                                                                                   "off-by-one", "one more")),
    Heldout("check_slowest_wavelength", "d - 1", b19_wavelength_dim_minus_one, ("d - 1", "dim - 1", "exponent")),
    Heldout("check_slowest_wavelength", "π instead of 2π", b19_wavelength_no_two_pi_but_pi, ("2π", "factor 2")),
    Heldout("check_apply_rope", "positions - 1", b19_rope_positions_minus_one, ("- 1", "one less", "off-by-one",
                                                                               "off by one")),
    Heldout("check_apply_rope", "exponent ℓ/d", b19_rope_exponent_without_two, ("factor 2", "ℓ/d", "exponent")),
    Heldout("check_repeat_kv", "group + 1", b19_kv_one_extra, ("group", "times", "h / h_kv", "+ 1")),
    Heldout("check_padded_positions", "index, not count", b19_padded_arange_masked,
            ("count", "skip", "cumsum", "index")),
    Heldout("check_padded_positions", "one too low", b19_padded_from_padding_idx,
            ("- 1", "one less", "off-by-one", "padding_idx + 1", "start")),
    Heldout("check_sinusoidal", "divided by θ", b19_sinusoidal_no_minus, ("minus", "sign", "exponent", "recipro")),
    Heldout("check_sinusoidal", "positions from 1", b19_sinusoidal_positions_from_one,
            ("from 1", "+ 1", "shift", "off-by-one", "one more")),
    Heldout("check_shaw_index", "upper clip c - 1", b19_shaw_upper_short, ("c - 1", "clip", "upper")),
    Heldout("check_shaw_index", "query_offset ignored", b19_shaw_offset_ignored, ("query_offset", "offset")),
    Heldout("check_relative_shift", "padded on the right", b19_shift_pad_right, ("pad", "left", "right", "column")),
    Heldout("check_t5_bucket", "max_distance doubled", b19_t5_max_distance_doubled,
            ("max_distance", "2·max_distance", "doubled")),
    Heldout("check_alibi_slopes", "integer step 8 // n", b19_slopes_integer_step, ("integer", "8/n", "step", "//")),
    Heldout("check_apply_rope_2d", "rows for both halves", b19_rope2d_rows_twice, ("rows", "columns", "column")),
    Heldout("check_rope_matrix_2d_blocks", "column blocks at the row", b19_blocks_column_uses_row,
            ("column", "row")),
    Heldout("check_rope_matrix_2d_blocks", "√base", b19_blocks_exponent_two, ("√base", "base", "exponent",
                                                                              "square root")),
    Heldout("check_position_recovery", "1/o without - 1", b19_recovery_reciprocal_only,
            ("- 1", "subtract", "i + 1", "one more")),
    Heldout("check_position_parameter_counts", "+ d² in part 2", b19_counts_width_squared,
            ("d²", "width²", "d^2", "square")),
    Heldout("check_concatenated_sinusoidal", "positions from 1", b19_concat_positions_from_one,
            ("from 1", "+ 1", "shift", "off-by-one", "one more")),
    Heldout("check_extended_rows", "clip at l - 2", b19_rows_clip_one_short, ("last row", "l - 1", "clip", "l - 2")),
    Heldout("check_pi_frequencies", "first pair kept", b19_pi_first_pair_kept, ("pair 0", "first pair", "every")),
    Heldout("check_pi_frequencies", "s^(2/d)", b19_pi_exponent_on_factor, ("exponent", "power", "s^")),
    Heldout("check_ntk_frequencies", "d/(d - 1)", b19_ntk_d_minus_one, ("d - 1", "d/(d-1)", "exponent")),
    Heldout("check_ntk_frequencies", "factor squared", b19_ntk_factor_squared, ("s²", "factor²", "squared")),
    Heldout("check_dynamic_ntk_frequencies", "seq_len + 1", b19_dynamic_seq_len_plus_one,
            ("seq_len + 1", "one more", "off-by-one")),
    Heldout("check_llama3_frequencies", "factor squared", b19_llama_factor_squared, ("s²", "factor²", "squared")),
]


# --------------------------------------------------------------------------- batch 20 (issue 32, third pass)
# Written at about 22:40 UTC on 2026-11-28, after every change made so far (batch 19's misses read as well), from
# the statements and the reference functions, without running any entry; keywords fixed before the run; measured once.


def b20_attention_softmax_over_queries(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-2).nan_to_num(0.0)
    return weights @ v, weights


def b20_attention_temperature_two(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / (2 * math.sqrt(q.shape[-1]))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def b20_cross_values_from_y(y, z, w_q, w_k, w_v):
    weights = ((y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])).softmax(-1)
    return weights @ (z @ w_v) + (y @ w_v).mean(0)


def b20_cross_keys_unprojected(y, z, w_q, w_k, w_v):
    q = y @ w_q
    weights = (q @ (z @ w_q).T / math.sqrt(w_k.shape[1])).softmax(-1)
    return weights @ (z @ w_v)


def b20_decay_lr_times_steps(initial, lr, weight_decay, steps):
    return initial * (1 - weight_decay) ** (lr * steps)


def b20_decay_squared(initial, lr, weight_decay, steps):
    return initial * ((1 - lr * weight_decay) ** steps) ** 2


def b20_alibi_abs_distance(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return -slopes[:, None, None] * (pos[None, :] - pos[:, None]).abs() * 2


def b20_alibi_times_two_slopes(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return 2 * slopes[:, None, None] * (pos[None, :] - pos[:, None])


def b20_at_positions_scaled_distance(slopes, positions):
    p = positions.double()
    return -slopes.double()[:, None, None] * (p[None, :] - p[:, None]).abs() / 2


def b20_at_positions_squared(slopes, positions):
    p = positions.double()
    return -slopes.double()[:, None, None] * (p[None, :] - p[:, None]) ** 2


def b20_gap_mean_abs(layer, x):
    reversal = torch.arange(x.shape[0] - 1, -1, -1)
    return (layer(x[reversal]) - layer(x)[reversal]).abs().mean().item()


def b20_unrotate_positions_minus_one(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -(positions - 1), base=base)


def b20_unrotate_half_layout(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -positions, base=base, layout="half")


def b20_linear_denominator_plus_one(q, k, v, base=10000.0):
    phi_q, phi_k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    num = torch.tril(posenc.apply_rope(phi_q, base=base) @ posenc.apply_rope(phi_k, base=base).transpose(-1, -2))
    den = torch.tril(phi_q @ phi_k.transpose(-1, -2)).sum(-1, keepdim=True) + 1
    return num @ v / den


def b20_linear_base_ignored(q, k, v, base=10000.0):
    phi_q, phi_k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    num = torch.tril(posenc.apply_rope(phi_q) @ posenc.apply_rope(phi_k).transpose(-1, -2))
    den = torch.tril(phi_q @ phi_k.transpose(-1, -2)).sum(-1, keepdim=True)
    return num @ v / den


def b20_decode_doubled(cache_len, num_new):
    return torch.arange(cache_len, cache_len + num_new) * 2 - cache_len


def b20_decode_reversed(cache_len, num_new):
    return torch.arange(cache_len + num_new - 1, cache_len - 1, -1)


def b20_stream_no_sinks_kept(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    return posenc.apply_rope(cached[..., total - window - sinks:, :], torch.full((window + sinks,), -shift))


def b20_stream_shift_by_window(cached, window, sinks=4):
    total = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., total - window:, :], torch.full((window,), -window))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b20_expected_sine_sign(cross, offsets, base=10000.0):
    dim = 2 * cross.shape[0]
    theta = base ** (-2 * torch.arange(dim // 2, dtype=torch.float64) / dim)
    angles = offsets.double()[:, None] * theta
    c = cross.double()
    return angles.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + angles.sin() @ (c[:, 0, 1] - c[:, 1, 0])


def b20_expected_half_trace(cross, offsets, base=10000.0):
    dim = 2 * cross.shape[0]
    theta = base ** (-2 * torch.arange(dim // 2, dtype=torch.float64) / dim)
    angles = offsets.double()[:, None] * theta
    c = cross.double()
    return angles.cos() @ c[:, 0, 0] + angles.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b20_asymmetry_plus_sign(query, key, offsets, base=10000.0):
    dim = query.shape[-1]
    theta = base ** (-2 * torch.arange(dim // 2, dtype=torch.float64) / dim)
    q, k = query.double(), key.double()
    return 2 * torch.sin(offsets.double()[:, None] * theta) @ (q[0::2] * k[1::2] - q[1::2] * k[0::2])


def b20_asymmetry_base_squared(query, key, offsets, base=10000.0):
    dim = query.shape[-1]
    theta = (base * base) ** (-2 * torch.arange(dim // 2, dtype=torch.float64) / dim)
    q, k = query.double(), key.double()
    return -2 * torch.sin(offsets.double()[:, None] * theta) @ (q[0::2] * k[1::2] - q[1::2] * k[0::2])


def b20_head_target_doubled(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([2 * target]), base=base)[0]


def b20_wavelength_base_over_d(dim, base):
    return 2 * math.pi * base ** (1 - 1 / dim)


def b20_rope_base_halved(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    return posenc.apply_rope(x, pos, base=base / 2)


def b20_rope_positions_reversed(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    return posenc.apply_rope(x, pos.flip(-1), base=base)


def b20_kv_reversed_heads(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=-3).flip(-3)


def b20_padded_counts_all(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return torch.cumsum(torch.ones_like(mask), dim=-1) * mask + padding_idx


def b20_padded_count_from_end(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return torch.cumsum(mask.flip(-1), dim=-1).flip(-1) * mask + padding_idx


def b20_sinusoidal_cos_sin_halves(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * base ** (
        -torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return torch.cat((angles.sin(), angles.cos()), -1).float()


def b20_sinusoidal_dim_in_exponent_minus(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * base ** (
        -torch.arange(0, dim, 2, dtype=torch.float64) / (dim - 2))
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).float()


def b20_shaw_sign_flipped(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return (i - j).clamp(-c, c) + c


def b20_shaw_c_plus_one(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return (j - i).clamp(-c, c) + c + 1


def b20_shift_no_pad(rel_logits):
    *lead, lq, lk = rel_logits.shape
    return rel_logits.flip(-1)


def b20_t5_num_buckets_halved(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return posenc.t5_relative_position_bucket(relative_position, bidirectional, num_buckets // 2, max_distance)


def b20_slopes_base_four(n):
    return [4.0 ** (-8 * h / n) for h in range(1, n + 1)]


def b20_slopes_squared(n):
    return (posenc.alibi_slopes(n) ** 2).tolist()


def b20_rope2d_columns_then_rows(x, rows, columns, base=10000.0):
    return posenc.apply_rope_2d(x, columns, rows, base=base)


def b20_rope2d_base_squared(x, rows, columns, base=10000.0):
    return posenc.apply_rope_2d(x, rows, columns, base=base ** 2)


def b20_blocks_rows_plus_one(row, column, dim, base=10000.0):
    from posenc.exercises.rotations import reference_rope_matrix_2d_blocks

    return reference_rope_matrix_2d_blocks(row + 1, column, dim, base)


def b20_blocks_transposed(row, column, dim, base=10000.0):
    from posenc.exercises.rotations import reference_rope_matrix_2d_blocks

    return reference_rope_matrix_2d_blocks(row, column, dim, base).T


def b20_recovery_minus_two(o):
    return (1 / o.double() - 2).round().long()


def b20_counts_part_three_doubled(positions, width):
    return (positions * width, positions * width, 6 * positions * width)


def b20_concat_cos_then_sin(seq_len, dim, base=10000.0):
    from posenc.exercises.foundations import reference_concatenated_sinusoidal

    table = reference_concatenated_sinusoidal(seq_len, dim, base)
    half = dim // 2
    return torch.cat((table[:, half:], table[:, :half]), -1)


def b20_rows_interpolate_reversed(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    rows = reference_extended_rows(table, length, option)
    return rows.flip(0) if option != "clip" else rows


def b20_pi_factor_halved(dim, base, factor):
    return posenc.pi_frequencies(dim, base, factor=factor / 2)


def b20_ntk_exponent_on_base(dim, base, factor):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim) * factor ** (-2 / (dim - 2))


def b20_dynamic_train_len_halved(dim, base, factor, train_len, seq_len):
    return posenc.dynamic_ntk_frequencies(dim, base, factor=factor, original_max_position=train_len // 2,
                                          seq_len=seq_len)


def b20_yarn_beta_fast_halved(dim, base, factor, train_len, beta_fast, beta_slow):
    return posenc.yarn_frequencies(dim, base, factor=factor, original_max_position=train_len, beta_fast=beta_fast / 2,
                                   beta_slow=beta_slow)


def b20_llama_high_minus_one(dim, base, factor, train_len, low, high):
    return posenc.llama3_frequencies(dim, base, factor=factor, original_max_position=train_len,
                                     low_freq_factor=low, high_freq_factor=high - 1)


HELDOUT_BATCH_20 = [
    Heldout("check_attention", "softmax over the queries", b20_attention_softmax_over_queries,
            ("softmax", "dim", "axis", "sum to 1")),
    Heldout("check_attention", "temperature 2", b20_attention_temperature_two, ("scal", "2", "sqrt")),
    Heldout("check_cross_attention", "a mean of y added", b20_cross_values_from_y, ("y", "offset", "added")),
    Heldout("check_cross_attention", "keys with w_q", b20_cross_keys_unprojected, ("w_q", "w_k", "keys")),
    Heldout("check_decayed_rows", "(1 - wd)^(lr T)", b20_decay_lr_times_steps, ("lr", "exponent", "(1 - wd)")),
    Heldout("check_decayed_rows", "factor squared", b20_decay_squared, ("squared", "power 2", "2T", "twice")),
    Heldout("check_alibi_bias_from_slopes", "-2 m |j - i|", b20_alibi_abs_distance, ("2", "factor", "abs")),
    Heldout("check_alibi_bias_from_slopes", "slopes doubled", b20_alibi_times_two_slopes, ("2", "doubled", "factor")),
    Heldout("check_alibi_bias_at_positions", "distance halved", b20_at_positions_scaled_distance,
            ("1/2", "half", "halved", "factor 2")),
    Heldout("check_alibi_bias_at_positions", "squared distance", b20_at_positions_squared,
            ("square", "power", "distance")),
    Heldout("check_reversal_gap", "mean of |...|", b20_gap_mean_abs, ("mean", "average", "max", "largest")),
    Heldout("check_unrotated_outputs", "positions - 1", b20_unrotate_positions_minus_one,
            ("- 1", "one less", "off-by-one", "off by one")),
    Heldout("check_unrotated_outputs", "half layout", b20_unrotate_half_layout, ("half", "layout", "interleav")),
    Heldout("check_linear_rope_attention", "denominator + 1", b20_linear_denominator_plus_one,
            ("denominator", "+ 1", "normalis")),
    Heldout("check_linear_rope_attention", "base ignored", b20_linear_base_ignored, ("base",)),
    Heldout("check_decode_positions", "positions step 2", b20_decode_doubled, ("step", "2", "twice")),
    Heldout("check_decode_positions", "reversed", b20_decode_reversed, ("reverse", "order", "decreas")),
    Heldout("check_streaming_cache", "sinks not kept", b20_stream_no_sinks_kept, ("sink",)),
    Heldout("check_streaming_cache", "shifted by the window", b20_stream_shift_by_window, ("shift", "window")),
    Heldout("check_expected_score", "sine term negated", b20_expected_sine_sign, ("sign", "sin", "opposite")),
    Heldout("check_expected_score", "half the trace", b20_expected_half_trace, ("trace", "C22", "c[:, 1, 1]",
                                                                              "both")),
    Heldout("check_score_asymmetry", "sign lost", b20_asymmetry_plus_sign, ("sign", "opposite", "minus")),
    Heldout("check_score_asymmetry", "base squared", b20_asymmetry_base_squared, ("base²", "squared", "d/2")),
    Heldout("check_positional_head_query", "target doubled", b20_head_target_doubled, ("twice", "2", "doubled")),
    Heldout("check_slowest_wavelength", "exponent 1 - 1/d", b20_wavelength_base_over_d,
            ("exponent", "2/d", "1/d", "dim")),
    Heldout("check_apply_rope", "base halved", b20_rope_base_halved, ("base/2", "halved", "base")),
    Heldout("check_apply_rope", "positions reversed", b20_rope_positions_reversed, ("revers", "order")),
    Heldout("check_repeat_kv", "heads reversed", b20_kv_reversed_heads, ("revers", "order")),
    Heldout("check_padded_positions", "counts every slot", b20_padded_counts_all, ("slot", "padding", "skip")),
    Heldout("check_padded_positions", "counted from the end", b20_padded_count_from_end,
            ("end", "revers", "order", "right to left")),
    Heldout("check_sinusoidal", "sines then cosines", b20_sinusoidal_cos_sin_halves,
            ("halves", "interleav", "concaten", "layout")),
    Heldout("check_sinusoidal", "exponent over d - 2", b20_sinusoidal_dim_in_exponent_minus,
            ("d - 2", "dim - 2", "linspace", "exponent")),
    Heldout("check_shaw_index", "i - j", b20_shaw_sign_flipped, ("i - j", "sign", "revers")),
    Heldout("check_shaw_index", "rows + 1", b20_shaw_c_plus_one, ("+ 1", "one more", "off by one", "off-by-one")),
    Heldout("check_relative_shift", "columns flipped", b20_shift_no_pad, ("revers", "flip", "order")),
    Heldout("check_t5_bucket", "num_buckets halved", b20_t5_num_buckets_halved, ("num_buckets", "half", "halved")),
    Heldout("check_alibi_slopes", "base 4", b20_slopes_base_four, ("4", "square", "base", "ratio")),
    Heldout("check_alibi_slopes", "slopes squared", b20_slopes_squared, ("square", "power 2", "2^(-16")),
    Heldout("check_apply_rope_2d", "rows and columns swapped", b20_rope2d_columns_then_rows,
            ("swap", "rows", "columns")),
    Heldout("check_apply_rope_2d", "base squared", b20_rope2d_base_squared, ("base²", "squared", "base")),
    Heldout("check_rope_matrix_2d_blocks", "row + 1", b20_blocks_rows_plus_one,
            ("row + 1", "one more", "off-by-one", "off by one")),
    Heldout("check_rope_matrix_2d_blocks", "transposed", b20_blocks_transposed, ("transpos", "sign", "-sin")),
    Heldout("check_position_recovery", "minus 2", b20_recovery_minus_two, ("- 2", "one less", "off by one", "offset",
                                                                           "off-by-one")),
    Heldout("check_position_parameter_counts", "part 3 doubled", b20_counts_part_three_doubled,
            ("6", "twice", "2 times", "doubled")),
    Heldout("check_concatenated_sinusoidal", "cosines first", b20_concat_cos_then_sin,
            ("cos", "halves", "swapped", "first")),
    Heldout("check_extended_rows", "interpolated rows reversed", b20_rows_interpolate_reversed,
            ("revers", "order")),
    Heldout("check_pi_frequencies", "factor halved", b20_pi_factor_halved, ("factor/2", "halved", "1/2", "2")),
    Heldout("check_ntk_frequencies", "PI-like factor", b20_ntk_exponent_on_base, ("exponent", "base", "s^")),
    Heldout("check_dynamic_ntk_frequencies", "train_len halved", b20_dynamic_train_len_halved,
            ("original_max_position", "halved", "// 2", "train")),
    Heldout("check_yarn_frequencies", "beta_fast halved", b20_yarn_beta_fast_halved, ("beta_fast", "halved")),
    Heldout("check_llama3_frequencies", "high - 1", b20_llama_high_minus_one, ("high", "- 1", "one less")),
]


# --------------------------------------------------------------------------- batch 21 (issue 32, third pass)
# Written at about 22:45 UTC on 2026-11-28, after batch 20's misses were generalised (reversal, the first k entries,
# a row mixed with the others, coincidences no longer named), without running any entry; keywords fixed before the
# run; measured once: the last honest figure of this pass.


def _b21_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b21_attention_scores_not_scaled(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def b21_attention_weights_squared(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights ** 2 / (weights ** 2).sum(-1, keepdim=True)


def b21_cross_scale_squared(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / w_k.shape[1]
    return scores.softmax(-1) @ (z @ w_v)


def b21_cross_output_doubled(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return scores.softmax(-1) @ (z @ w_v) * 2


def b21_decay_negative(initial, lr, weight_decay, steps):
    return initial * (1 + lr * weight_decay) ** steps


def b21_alibi_sign_flipped(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return -slopes[:, None, None] * (pos[None, :] - pos[:, None])


def b21_alibi_offset_minus_one(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return slopes[:, None, None] * (pos[None, :] - pos[:, None] - 1)


def b21_at_positions_max_minus(slopes, positions):
    p = positions.double()
    return -slopes.double()[:, None, None] * (p.max() - p)[None, None, :].expand(len(slopes), len(p), len(p))


def b21_at_positions_slopes_first_only(slopes, positions):
    p = positions.double()
    return -slopes.double()[:1, None, None].expand(len(slopes), 1, 1) * (p[None, :] - p[:, None]).abs()


def b21_gap_without_reversing_input(layer, x):
    reversal = torch.arange(x.shape[0] - 1, -1, -1)
    return (layer(x) - layer(x)[reversal]).abs().max().item()


def b21_unrotate_positions_doubled(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -2 * positions, base=base)


def b21_unrotate_base_plus_one(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -positions, base=base + 1)


def b21_linear_values_reversed(q, k, v, base=10000.0):
    phi_q, phi_k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    num = torch.tril(posenc.apply_rope(phi_q, base=base) @ posenc.apply_rope(phi_k, base=base).transpose(-1, -2))
    den = torch.tril(phi_q @ phi_k.transpose(-1, -2)).sum(-1, keepdim=True)
    return num @ v.flip(0) / den


def b21_linear_halved(q, k, v, base=10000.0):
    phi_q, phi_k = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    num = torch.tril(posenc.apply_rope(phi_q, base=base) @ posenc.apply_rope(phi_k, base=base).transpose(-1, -2))
    den = torch.tril(phi_q @ phi_k.transpose(-1, -2)).sum(-1, keepdim=True)
    return (num @ v / den) * 0.5


def b21_decode_plus_num_new(cache_len, num_new):
    return torch.arange(cache_len, cache_len + num_new) + num_new


def b21_decode_float_halves(cache_len, num_new):
    return torch.arange(cache_len, cache_len + num_new) / 1.0 + 0.5


def b21_stream_window_short(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    moved = posenc.apply_rope(cached[..., total - window + 1:, :], torch.full((window - 1,), -shift))
    return torch.cat((cached[..., :sinks + 1, :], moved), dim=-2)


def b21_stream_base_fixed(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    moved = posenc.apply_rope(cached[..., total - window:, :], torch.full((window,), -shift), base=1e8)
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b21_expected_offsets_doubled(cross, offsets, base=10000.0):
    from posenc.exercises.longrange import reference_expected_score

    return reference_expected_score(cross, 2 * offsets, base)


def b21_expected_cross_transposed(cross, offsets, base=10000.0):
    from posenc.exercises.longrange import reference_expected_score

    return reference_expected_score(cross.transpose(-2, -1), offsets, base)


def b21_asymmetry_offsets_plus_one(query, key, offsets, base=10000.0):
    from posenc.exercises.longrange import reference_score_asymmetry

    return reference_score_asymmetry(query, key, offsets + 1, base)


def b21_asymmetry_key_query_swapped(query, key, offsets, base=10000.0):
    from posenc.exercises.longrange import reference_score_asymmetry

    return reference_score_asymmetry(key, query, offsets, base)


def b21_head_base_squared(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([target]), base=base * base)[0]


def b21_wavelength_base_halved(dim, base):
    return 2 * math.pi * (base / 2) ** (1 - 2 / dim)


def b21_rope_positions_times_three(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    return posenc.apply_rope(x, 3 * pos, base=base)


def b21_rope_last_pair_unrotated(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    out = posenc.apply_rope(x, pos, base=base).clone()
    out[..., -2:] = x[..., -2:]
    return out


def b21_padded_ne_ignored(input_ids, padding_idx=1):
    mask = (input_ids != 0).long()
    return torch.cumsum(mask, dim=-1) * mask + padding_idx


def b21_padded_plus_two(input_ids, padding_idx=1):
    mask = input_ids.ne(padding_idx).long()
    return (torch.cumsum(mask, dim=-1) + 1) * mask + padding_idx


def b21_sinusoidal_base_times_ten(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b21_theta(dim, 10 * base)
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).float()


def b21_sinusoidal_cos_negated(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b21_theta(dim, base)
    return torch.stack((angles.sin(), -angles.cos()), -1).flatten(-2).float()


def b21_shaw_c_doubled(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return (j - i).clamp(-2 * c, 2 * c) + 2 * c


def b21_shift_doubled(rel_logits):
    from posenc.exercises.relative import _shift_reference

    return _shift_reference(rel_logits)[0] * 2


def b21_t5_bidirectional_inverted(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return posenc.t5_relative_position_bucket(relative_position, not bidirectional, num_buckets, max_distance)


def b21_slopes_doubled(n):
    return (2 * posenc.alibi_slopes(n)).tolist()


def b21_rope2d_rows_plus_one(x, rows, columns, base=10000.0):
    return posenc.apply_rope_2d(x, rows + 1, columns, base=base)


def b21_blocks_base_halved(row, column, dim, base=10000.0):
    from posenc.exercises.rotations import reference_rope_matrix_2d_blocks

    return reference_rope_matrix_2d_blocks(row, column, dim, base / 2)


def b21_recovery_doubled(o):
    return (1 / o.double() - 1).round().long() * 2


def b21_counts_width_plus_one(positions, width):
    return (positions * (width + 1), positions * (width + 1), 3 * positions * (width + 1))


def b21_concat_base_halved(seq_len, dim, base=10000.0):
    from posenc.exercises.foundations import reference_concatenated_sinusoidal

    return reference_concatenated_sinusoidal(seq_len, dim, base / 2)


def b21_rows_clip_doubled(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    return reference_extended_rows(table, length, option) * 2


def b21_pi_squared(dim, base, factor):
    return posenc.pi_frequencies(dim, base, factor=factor) ** 2


def b21_ntk_factor_plus_one(dim, base, factor):
    return posenc.ntk_frequencies(dim, base, factor=factor + 1)


def b21_dynamic_factor_doubled(dim, base, factor, train_len, seq_len):
    return posenc.dynamic_ntk_frequencies(dim, base, factor=2 * factor, original_max_position=train_len,
                                          seq_len=seq_len)


def b21_yarn_train_len_doubled(dim, base, factor, train_len, beta_fast, beta_slow):
    return posenc.yarn_frequencies(dim, base, factor=factor, original_max_position=2 * train_len,
                                   beta_fast=beta_fast, beta_slow=beta_slow)


def b21_llama_low_plus_one(dim, base, factor, train_len, low, high):
    return posenc.llama3_frequencies(dim, base, factor=factor, original_max_position=train_len,
                                     low_freq_factor=low + 1, high_freq_factor=high)


HELDOUT_BATCH_21 = [
    Heldout("check_attention", "no scaling", b21_attention_scores_not_scaled, ("scal", "sqrt", "√")),
    Heldout("check_attention", "weights squared", b21_attention_weights_squared, ("square", "power", "weights")),
    Heldout("check_cross_attention", "divided by d_k", b21_cross_scale_squared, ("d_k", "sqrt", "√", "scal")),
    Heldout("check_cross_attention", "output doubled", b21_cross_output_doubled, ("2", "twice", "factor")),
    Heldout("check_decayed_rows", "1 + lr wd", b21_decay_negative, ("sign", "1 + ", "grow", "minus")),
    Heldout("check_alibi_bias_from_slopes", "sign flipped", b21_alibi_sign_flipped, ("sign", "i - j",
                                                                                             "opposite")),
    Heldout("check_alibi_bias_from_slopes", "offset - 1", b21_alibi_offset_minus_one, ("- 1", "off by one",
                                                                                      "off-by-one", "diagonal")),
    Heldout("check_alibi_bias_at_positions", "distance to the last", b21_at_positions_max_minus,
            ("j - i", "p_j - p_i", "difference", "diagonal")),
    Heldout("check_alibi_bias_at_positions", "first slope for every head", b21_at_positions_slopes_first_only,
            ("slope", "head")),
    Heldout("check_reversal_gap", "input not reversed", b21_gap_without_reversing_input, ("revers", "input", "x")),
    Heldout("check_unrotated_outputs", "positions doubled", b21_unrotate_positions_doubled,
            ("2·positions", "doubled", "twice")),
    Heldout("check_unrotated_outputs", "base + 1", b21_unrotate_base_plus_one, ("base + 1", "one more", "base")),
    Heldout("check_linear_rope_attention", "values reversed", b21_linear_values_reversed,
            ("revers", "v", "values")),
    Heldout("check_linear_rope_attention", "halved", b21_linear_halved, ("1/2", "half", "factor 2")),
    Heldout("check_decode_positions", "+ num_new", b21_decode_plus_num_new, ("num_new",)),
    Heldout("check_decode_positions", "+ 0.5", b21_decode_float_halves, ("0.5", "offset", "same amount")),
    Heldout("check_streaming_cache", "window one short", b21_stream_window_short, ("window", "one", "short",
                                                                                  "sink")),
    Heldout("check_streaming_cache", "base fixed at 1e8", b21_stream_base_fixed, ("base",)),
    Heldout("check_expected_score", "offsets doubled", b21_expected_offsets_doubled,
            ("2·offsets", "doubled", "twice")),
    Heldout("check_expected_score", "C transposed", b21_expected_cross_transposed, ("transpos", "C12", "sign",
                                                                                    "C^T")),
    Heldout("check_score_asymmetry", "offsets + 1", b21_asymmetry_offsets_plus_one,
            ("offsets + 1", "one more", "off-by-one")),
    Heldout("check_score_asymmetry", "key and query swapped", b21_asymmetry_key_query_swapped,
            ("swap", "key", "query", "sign")),
    Heldout("check_positional_head_query", "base squared", b21_head_base_squared, ("base", "squared", "d/2")),
    Heldout("check_slowest_wavelength", "base halved", b21_wavelength_base_halved, ("base/2", "halved", "base")),
    Heldout("check_apply_rope", "positions tripled", b21_rope_positions_times_three, ("3", "tripled", "three")),
    Heldout("check_apply_rope", "last pair unrotated", b21_rope_last_pair_unrotated,
            ("last pair", "last", "not rotated", "unrotated")),
    Heldout("check_padded_positions", "padding id 0 assumed", b21_padded_ne_ignored, ("padding_idx", "0", "id")),
    Heldout("check_padded_positions", "one too high", b21_padded_plus_two, ("+ 1", "one more", "off by one",
                                                                           "off-by-one", "(+1)")),
    Heldout("check_sinusoidal", "base times 10", b21_sinusoidal_base_times_ten, ("base", "10")),
    Heldout("check_sinusoidal", "cosines negated", b21_sinusoidal_cos_negated, ("sign", "cos", "negat")),
    Heldout("check_shaw_index", "c doubled", b21_shaw_c_doubled, ("2c", "2·c", "doubled", "twice")),
    Heldout("check_relative_shift", "doubled", b21_shift_doubled, ("2", "twice", "factor")),
    Heldout("check_t5_bucket", "bidirectional inverted", b21_t5_bidirectional_inverted, ("bidirectional",)),
    Heldout("check_alibi_slopes", "slopes doubled", b21_slopes_doubled, ("2", "twice", "factor", "ratio")),
    Heldout("check_apply_rope_2d", "rows + 1", b21_rope2d_rows_plus_one, ("rows + 1", "one more", "off-by-one")),
    Heldout("check_rope_matrix_2d_blocks", "base halved", b21_blocks_base_halved, ("base/2", "halved", "base")),
    Heldout("check_position_recovery", "positions doubled", b21_recovery_doubled, ("2", "twice", "doubled")),
    Heldout("check_position_parameter_counts", "width + 1", b21_counts_width_plus_one,
            ("d + 1", "width + 1", "one more", "bias")),
    Heldout("check_concatenated_sinusoidal", "base halved", b21_concat_base_halved, ("base/2", "halved", "base")),
    Heldout("check_extended_rows", "rows doubled", b21_rows_clip_doubled, ("2", "twice", "factor")),
    Heldout("check_pi_frequencies", "frequencies squared", b21_pi_squared, ("square", "power 2", "exponent")),
    Heldout("check_ntk_frequencies", "factor + 1", b21_ntk_factor_plus_one, ("factor + 1", "one more", "off-by-one")),
    Heldout("check_dynamic_ntk_frequencies", "factor doubled", b21_dynamic_factor_doubled,
            ("2·factor", "doubled", "twice")),
    Heldout("check_yarn_frequencies", "training length doubled", b21_yarn_train_len_doubled,
            ("original_max_position", "doubled", "twice")),
    Heldout("check_llama3_frequencies", "low + 1", b21_llama_low_plus_one,
            ("low_freq_factor + 1", "one more", "off-by-one")),
]


# --------------------------------------------------------------------------- batch 22 (issue 32, fourth pass)
# Written at about 01:15 UTC on 2026-11-29 by a new session (checkers3), after the fourth pass's first changes (the
# half-precision and heads-from-0 messages confirmed on a second probe, the relative shift read by its source column,
# an exact transformation said before an exercise's own property, the ladder slips of the positional head and the
# streaming cache, a cache read row by row), from the exercises' statements and references only, before any entry
# was run; keywords fixed before the run; measured once.


def _b22_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b22_attention_masked_after_softmax(q, k, v, mask=None):
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights


def b22_attention_scaled_by_d(q, k, v, mask=None):
    d = q.size(-1)
    scores = torch.matmul(q, k.transpose(-1, -2)) / d
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), -float("inf"))
    p = scores.softmax(dim=-1)
    return p @ v, p


def b22_cross_values_from_y(y, z, w_q, w_k, w_v):
    q, k, v = y @ w_q, z @ w_k, y @ w_v
    att = torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=-1)
    return att @ v


def b22_cross_no_query_projection(y, z, w_q, w_k, w_v):
    k = z @ w_k
    att = torch.softmax(y @ k.T / math.sqrt(k.shape[-1]), dim=-1)
    return att @ (z @ w_v)


def b22_decay_loop_from_one(initial, lr, weight_decay, steps):
    rows = initial.clone()
    for _ in range(1, steps):
        rows = rows - lr * weight_decay * rows
    return rows


def b22_decay_half_precision(initial, lr, weight_decay, steps):
    factor = (1 - torch.tensor(lr * weight_decay, dtype=torch.float16)) ** steps
    return initial * factor.to(initial.dtype)


def b22_alibi_slopes_wrong_axis(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    rel = pos[None, :] - pos[:, None]
    return slopes[None, :, None] * rel[:, None, :]


def b22_alibi_divided_by_slopes(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return (pos[None, :] - pos[:, None])[None] / slopes[:, None, None]


def b22_at_positions_no_abs(slopes, positions):
    p = positions.to(torch.float64)
    return -slopes.to(torch.float64).view(-1, 1, 1) * (p.view(1, -1) - p.view(-1, 1))


def b22_at_positions_slopes_reversed(slopes, positions):
    p = positions.double()
    return -slopes.double().flip(0)[:, None, None] * (p[None, :] - p[:, None]).abs()


def b22_gap_mean_then_max(layer, x):
    idx = torch.arange(x.shape[0] - 1, -1, -1)
    return float((layer(x[idx]) - layer(x)[idx]).abs().mean(dim=0).max())


def b22_unrotate_positions_reversed(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -positions.flip(0), base=base)


def b22_unrotate_relative_to_first(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -(positions - positions[0]), base=base)


def b22_linear_rotated_denominator(q, k, v, base=10000.0):
    fq, fk = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    rq, rk = posenc.apply_rope(fq, base=base), posenc.apply_rope(fk, base=base)
    scores = torch.tril(rq @ rk.T)
    return scores @ v / scores.sum(-1, keepdim=True)


def b22_linear_exp_features(q, k, v, base=10000.0):
    fq, fk = q.exp(), k.exp()
    num = torch.tril(posenc.apply_rope(fq, base=base) @ posenc.apply_rope(fk, base=base).T)
    den = torch.tril(fq @ fk.T).sum(-1, keepdim=True)
    return num @ v / den


def b22_decode_end_forgot_cache(cache_len, num_new):
    return torch.arange(cache_len, max(num_new, cache_len + 1))


def b22_stream_sinks_moved_too(cached, window, sinks=4):
    n = cached.shape[-2]
    shift = n - window - sinks
    kept = torch.cat((cached[..., :sinks, :], cached[..., n - window:, :]), dim=-2)
    return posenc.apply_rope(kept, torch.full((sinks + window,), -shift))


def b22_stream_shift_without_sinks(cached, window, sinks=4):
    n = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., -window:, :], torch.full((window,), -(n - window)))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b22_expected_sine_sum(cross, offsets, base=10000.0):
    dim = 2 * cross.shape[0]
    theta = _b22_theta(dim, base)
    ang = offsets.double()[:, None] * theta[None, :]
    c = cross.double()
    return (ang.cos() * (c[:, 0, 0] + c[:, 1, 1])).sum(-1) + (ang.sin() * (c[:, 1, 0] + c[:, 0, 1])).sum(-1)


def b22_asymmetry_cosine(query, key, offsets, base=10000.0):
    theta = _b22_theta(query.shape[-1], base)
    q, k = query.double(), key.double()
    imag = q[0::2] * k[1::2] - q[1::2] * k[0::2]
    return -2 * torch.cos(offsets.double()[:, None] * theta) @ imag


def b22_head_half_layout(key, target, base=10000.0):
    return posenc.apply_rope(key[None], torch.tensor([target]), base=base, layout="half")[0]


def b22_wavelength_no_exponent(dim, base):
    return 2 * math.pi * base


def b22_rope_float16_angles(x, positions=None, base=10000.0):
    L, d = x.shape[-2:]
    pos = torch.arange(L) if positions is None else positions
    theta = _b22_theta(d, base).to(torch.float16)
    ang = pos.to(torch.float16)[:, None] * theta[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2)


def b22_rope_mirrored_pairs(x, positions=None, base=10000.0):
    L, d = x.shape[-2:]
    pos = torch.arange(L) if positions is None else positions
    ang = pos.double()[:, None] * _b22_theta(d, base)[None, :]
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    a, b = x[..., : d // 2], x[..., d // 2:].flip(-1)
    first, second = a * cos - b * sin, a * sin + b * cos
    return torch.cat((first, second.flip(-1)), -1)


def b22_repeat_expand_tiled(kv, num_heads):
    b, h_kv, L, d = kv.shape
    n_rep = num_heads // h_kv
    return kv[:, None].expand(b, n_rep, h_kv, L, d).reshape(b, num_heads, L, d)


def b22_padded_padding_zero(input_ids, padding_idx=1):
    mask = (input_ids != padding_idx).int()
    return (torch.cumsum(mask, dim=1) + padding_idx) * mask


def b22_sinusoidal_pair_index_exponent(seq_len, dim, base=10000.0):
    pe = torch.zeros(seq_len, dim)
    for pos in range(seq_len):
        for i in range(dim // 2):
            angle = pos / base ** (i / dim)
            pe[pos, 2 * i] = math.sin(angle)
            pe[pos, 2 * i + 1] = math.cos(angle)
    return pe


def b22_sinusoidal_cos_in_even(seq_len, dim, base=10000.0):
    pos = torch.arange(seq_len).unsqueeze(1).float()
    div = torch.exp(torch.arange(0, dim, 2).float() * (-math.log(base) / dim))
    pe = torch.zeros(seq_len, dim)
    pe[:, 0::2] = torch.cos(pos * div)
    pe[:, 1::2] = torch.sin(pos * div)
    return pe


def b22_shaw_offset_subtracted(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] - query_offset
    j = torch.arange(k_len)[None, :]
    return torch.clamp(j - i, -c, c) + c


def b22_shift_roll_wrong_way(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    rows = [torch.roll(rel_logits[..., r, :], shifts=lq - 1 - r, dims=-1) for r in range(lq)]
    return torch.stack(rows, dim=-2)


def b22_t5_directions_swapped(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return posenc.t5_relative_position_bucket(-relative_position, bidirectional, num_buckets, max_distance)


def b22_t5_max_exact_quarter(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    ret = torch.zeros_like(relative_position)
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret = ret + (n < 0).long() * num_buckets
        n = n.abs()
    else:
        n = n.clamp(min=0)
    max_exact = num_buckets // 2 if bidirectional else num_buckets // 4
    is_small = n < max_exact
    large = max_exact + (torch.log(n.float().clamp(min=1) / max_exact) / math.log(max_distance / max_exact)
                         * (num_buckets - max_exact)).long()
    large = large.clamp(max=num_buckets - 1)
    return ret + torch.where(is_small, n, large)


def b22_slopes_repeat_small_power(n):
    m = 2 ** math.floor(math.log2(n))
    base = [2 ** (-8 * h / m) for h in range(1, m + 1)]
    return (base + base)[:n]


def b22_rope2d_flat_index(x, rows, columns, base=10000.0):
    width = int(columns.max()) + 1
    flat = rows * width + columns
    return posenc.apply_rope_2d(x, flat, flat, base=base)


def b22_blocks_rows_then_columns(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    blocks = []
    for position in (row, column):
        for f in theta.tolist():
            a = torch.tensor(position * f, dtype=torch.float64)
            blocks.append(torch.tensor([[a.cos(), -a.sin()], [a.sin(), a.cos()]], dtype=torch.float64))
    return torch.block_diag(*blocks)


def b22_recovery_not_rounded(o):
    return 1.0 / o.double() - 1.0


def b22_counts_part3_two_projections(positions, width):
    return (positions * width, positions * width, 2 * positions * width)


def b22_concat_exponent_over_half(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / half)
    ang = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((ang.sin(), ang.cos()), dim=-1)


def b22_rows_linspace_to_rows(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option != "interpolate":
        return reference_extended_rows(table, length, option)
    rows = table.shape[0]
    where = torch.linspace(0, rows, length, dtype=torch.float64).clamp(max=rows - 1)
    low = where.floor().long().clamp(max=rows - 2)
    frac = (where - low).to(table.dtype)[:, None]
    return (1 - frac) * table[low] + frac * table[low + 1]


def b22_rows_copy_integer_division(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option != "copy":
        return reference_extended_rows(table, length, option)
    return table[(torch.arange(length) // table.shape[0]).clamp(max=table.shape[0] - 1)]


def b22_pi_multiplied(dim, base, factor):
    return factor * base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b22_ntk_exponent_on_base(dim, base, factor):
    new_base = base ** (dim / (dim - 2)) * factor
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b22_dynamic_no_max(dim, base, factor, train_len, seq_len):
    scale = factor * seq_len / train_len - (factor - 1)
    return (base * scale ** (dim / (dim - 2))) ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b22_yarn_betas_swapped(dim, base, factor, train_len, beta_fast, beta_slow):
    return posenc.yarn_frequencies(dim, base, factor=factor, original_max_position=train_len,
                                   beta_fast=beta_slow, beta_slow=beta_fast)


def b22_llama_factors_swapped(dim, base, factor, train_len, low, high):
    return posenc.llama3_frequencies(dim, base, factor=factor, original_max_position=train_len,
                                     low_freq_factor=high, high_freq_factor=low)


HELDOUT_BATCH_22 = [
    Heldout("check_attention", "masked after the softmax", b22_attention_masked_after_softmax,
            ("after the softmax", "renormal", "sum to 1", "before the softmax")),
    Heldout("check_attention", "scaled by d", b22_attention_scaled_by_d, ("sqrt", "√", "instead of sqrt")),
    Heldout("check_cross_attention", "values from y", b22_cross_values_from_y, ("y", "z W_V", "values")),
    Heldout("check_cross_attention", "no query projection", b22_cross_no_query_projection,
            ("w_q", "query projection", "W_Q")),
    Heldout("check_decayed_rows", "loop from 1", b22_decay_loop_from_one, ("T - 1", "one less", "steps - 1",
                                                                          "one step")),
    Heldout("check_decayed_rows", "half precision", b22_decay_half_precision, ("precision", "float16", "half")),
    Heldout("check_alibi_bias_from_slopes", "slopes on the wrong axis", b22_alibi_slopes_wrong_axis,
            ("axis", "axes", "head")),
    Heldout("check_alibi_bias_from_slopes", "divided by the slopes", b22_alibi_divided_by_slopes,
            ("divid", "reciprocal", "1/slopes")),
    Heldout("check_alibi_bias_at_positions", "no absolute value", b22_at_positions_no_abs,
            ("abs", "|", "absolute")),
    Heldout("check_alibi_bias_at_positions", "slopes reversed", b22_at_positions_slopes_reversed,
            ("revers", "order")),
    Heldout("check_reversal_gap", "mean over rows, then max", b22_gap_mean_then_max, ("mean", "average")),
    Heldout("check_unrotated_outputs", "positions reversed", b22_unrotate_positions_reversed, ("revers", "order")),
    Heldout("check_unrotated_outputs", "relative to the first", b22_unrotate_relative_to_first,
            ("positions[0]", "first position", "relative to")),
    Heldout("check_linear_rope_attention", "rotated denominator", b22_linear_rotated_denominator,
            ("denominator",)),
    Heldout("check_linear_rope_attention", "exp features", b22_linear_exp_features, ("exp", "feature")),
    Heldout("check_decode_positions", "end forgets cache_len", b22_decode_end_forgot_cache,
            ("cache_len + num_new", "end", "num_new")),
    Heldout("check_streaming_cache", "sinks moved too", b22_stream_sinks_moved_too, ("sinks", "unmoved")),
    Heldout("check_streaming_cache", "shift without the sinks", b22_stream_shift_without_sinks,
            ("n - w - sinks", "n - window - sinks", "moved back by")),
    Heldout("check_expected_score", "C12 + C21 in the sine", b22_expected_sine_sum, ("C21 - C12", "antisymmetric")),
    Heldout("check_score_asymmetry", "cosine for sine", b22_asymmetry_cosine, ("cos", "sine")),
    Heldout("check_positional_head_query", "half layout", b22_head_half_layout, ("half", "layout")),
    Heldout("check_slowest_wavelength", "no exponent", b22_wavelength_no_exponent,
            ("exponent", "1 - 2/d", "(d - 2)/d", "power")),
    Heldout("check_apply_rope", "float16 angles", b22_rope_float16_angles, ("precision", "float16", "half")),
    Heldout("check_apply_rope", "mirrored pairs", b22_rope_mirrored_pairs, ("pair", "layout")),
    Heldout("check_repeat_kv", "expand then reshape, tiled", b22_repeat_expand_tiled,
            ("tiled", "interleave", "[0, 1, 0, 1]", "order")),
    Heldout("check_padded_positions", "padding gets 0", b22_padded_padding_zero, ("padding_idx", "padding")),
    Heldout("check_sinusoidal", "exponent i/dim", b22_sinusoidal_pair_index_exponent, ("2ℓ", "exponent", "ℓ/d",
                                                                                       "half as fast")),
    Heldout("check_sinusoidal", "cosines in the even columns", b22_sinusoidal_cos_in_even,
            ("cos", "swap", "exchanged")),
    Heldout("check_shaw_index", "query_offset subtracted", b22_shaw_offset_subtracted, ("query_offset",)),
    Heldout("check_relative_shift", "roll the wrong way", b22_shift_roll_wrong_way,
            ("j + Lq - 1 - r", "column", "roll", "direction")),
    Heldout("check_t5_bucket", "directions swapped", b22_t5_directions_swapped,
            ("-relative_position", "sign", "direction", "opposite")),
    Heldout("check_t5_bucket", "max_exact a quarter when causal", b22_t5_max_exact_quarter,
            ("max_exact", "num_buckets // 2")),
    Heldout("check_alibi_slopes", "small power repeated", b22_slopes_repeat_small_power,
            ("every other", "[0::2]", "2m", "repeat")),
    Heldout("check_apply_rope_2d", "flattened index", b22_rope2d_flat_index, ("flat", "index", "rows", "columns")),
    Heldout("check_rope_matrix_2d_blocks", "row blocks then column blocks", b22_blocks_rows_then_columns,
            ("order", "interleav", "alternat", "permut")),
    Heldout("check_position_recovery", "not rounded", b22_recovery_not_rounded, ("round", "integer", "long")),
    Heldout("check_position_parameter_counts", "part 3 with two projections", b22_counts_part3_two_projections,
            ("V", "three", "2/3", "value")),
    Heldout("check_concatenated_sinusoidal", "exponent over d/2", b22_concat_exponent_over_half,
            ("d/2 - 1", "half - 1", "exponent")),
    Heldout("check_extended_rows", "linspace to L", b22_rows_linspace_to_rows, ("L - 1", "rows - 1", "end")),
    Heldout("check_extended_rows", "copy by integer division", b22_rows_copy_integer_division,
            ("mod", "%", "modulo")),
    Heldout("check_pi_frequencies", "multiplied by s", b22_pi_multiplied, ("multipl", "divide", "s²", "times")),
    Heldout("check_ntk_frequencies", "exponent on the base", b22_ntk_exponent_on_base,
            ("exponent", "which term", "base^(d/(d-2))")),
    Heldout("check_dynamic_ntk_frequencies", "no max with the training length", b22_dynamic_no_max,
            ("max", "training length", "below")),
    Heldout("check_yarn_frequencies", "betas swapped", b22_yarn_betas_swapped, ("swap", "beta_fast", "beta_slow")),
    Heldout("check_llama3_frequencies", "factors swapped", b22_llama_factors_swapped,
            ("swap", "low_freq_factor", "high_freq_factor")),
]


# --------------------------------------------------------------------------- batch 23 (issue 32, fourth pass)
# Written at about 01:22 UTC on 2026-11-29 (checkers3), after the generalisation that followed batch 22 (a precision
# read before an exercise's property, RoPE read by the positions each pair turns by and by the coordinates it pairs, a
# table read by the rule of its positions, T5's max_exact, a relative shift read modulo Lk, a permuted shape kept with
# a property), from the exercises' statements and references only, before any entry was run; keywords fixed before the
# run; measured once.


def b23_attention_output_scaled(q, k, v, mask=None):
    s = torch.einsum("...qd,...kd->...qk", q, k)
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = torch.softmax(s, dim=-1)
    return w @ v / math.sqrt(q.shape[-1]), w


def b23_attention_weights_transposed(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = s.softmax(-1)
    return w @ v, w.transpose(-2, -1)


def b23_cross_softmax_flattened(y, z, w_q, w_k, w_v):
    s = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    w = torch.softmax(s.flatten(), dim=0).view_as(s)
    return w @ (z @ w_v)


def b23_cross_values_with_w_k(y, z, w_q, w_k, w_v):
    s = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])
    return torch.softmax(s, dim=-1) @ (z @ w_k)


def b23_decay_factor_only(initial, lr, weight_decay, steps):
    return (1 - lr * weight_decay) ** steps


def b23_alibi_slopes_squared(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return (slopes ** 2)[:, None, None] * (pos[None, :] - pos[:, None])


def b23_at_positions_keys_only(slopes, positions):
    p = positions.double()
    h, n = len(slopes), len(p)
    return -(slopes.double()[:, None, None] * p.abs()[None, None, :]).expand(h, n, n)


def b23_gap_per_position(layer, x):
    rev = torch.arange(x.shape[0] - 1, -1, -1)
    return (layer(x[rev]) - layer(x)[rev]).abs().amax(dim=-1)


def b23_unrotate_half_positions(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -positions / 2, base=base)


def b23_linear_not_causal(q, k, v, base=10000.0):
    fq, fk = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    num = posenc.apply_rope(fq, base=base) @ posenc.apply_rope(fk, base=base).T
    den = (fq @ fk.T).sum(-1, keepdim=True)
    return num @ v / den


def b23_linear_elu_without_one(q, k, v, base=10000.0):
    fq, fk = torch.nn.functional.elu(q), torch.nn.functional.elu(k)
    num = torch.tril(posenc.apply_rope(fq, base=base) @ posenc.apply_rope(fk, base=base).T)
    den = torch.tril(fq @ fk.T).sum(-1, keepdim=True)
    return num @ v / den


def b23_decode_last_of_cache(cache_len, num_new):
    return torch.arange(cache_len - num_new, cache_len)


def b23_stream_window_skips_last(cached, window, sinks=4):
    n = cached.shape[-2]
    kept = cached[..., n - window - 1:n - 1, :]
    moved = posenc.apply_rope(kept, torch.full((window,), -(n - window - sinks)))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b23_stream_four_sinks(cached, window, sinks=4):
    n = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., n - window:, :], torch.full((window,), -(n - window - 4)))
    return torch.cat((cached[..., :4, :], moved), dim=-2)


def b23_expected_per_pair(cross, offsets, base=10000.0):
    dim = 2 * cross.shape[0]
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    ang = offsets.double()[:, None] * theta
    c = cross.double()
    return ang.cos() * (c[:, 0, 0] + c[:, 1, 1]) + ang.sin() * (c[:, 1, 0] - c[:, 0, 1])


def b23_asymmetry_sum(query, key, offsets, base=10000.0):
    def score(delta):
        return posenc.apply_rope(query[None], torch.zeros(1), base=base)[0] @ posenc.apply_rope(
            key[None], delta.reshape(1), base=base)[0]
    return torch.stack([score(d.double()) + score(-d.double()) for d in offsets])


def b23_head_unit_vector(key, target, base=10000.0):
    e = torch.zeros_like(key)
    e[0] = 1.0
    return posenc.apply_rope(e[None], torch.tensor([target]), base=base)[0]


def b23_wavelength_fastest(dim, base):
    return 2 * math.pi


def b23_rope_cat_frequencies(x, positions=None, base=10000.0):
    L, d = x.shape[-2:]
    pos = torch.arange(L) if positions is None else positions
    freqs = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = pos.double()[:, None] * torch.cat((freqs, freqs))[None, :]
    rotated = torch.stack((-x[..., 1::2], x[..., 0::2]), -1).flatten(-2)
    return (x * ang.cos() + rotated * ang.sin()).to(x.dtype)


def b23_rope_half_offset(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    return posenc.apply_rope(x, pos + 0.5, base=base)


def b23_repeat_last_axis(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=-1)


def b23_padded_counts_padding(input_ids, padding_idx=1):
    pad = (input_ids == padding_idx).long()
    return torch.cumsum(pad, dim=-1) * pad + padding_idx


def b23_sinusoidal_float16(seq_len, dim, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float16)[:, None]
    theta = (base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)).to(torch.float16)
    ang = pos * theta
    return torch.stack((ang.sin(), ang.cos()), -1).flatten(-2).float()


def b23_sinusoidal_column_exponent(seq_len, dim, base=10000.0):
    cols = torch.arange(dim, dtype=torch.float64)
    ang = torch.arange(seq_len, dtype=torch.float64)[:, None] / base ** (cols / dim)
    out = torch.empty(seq_len, dim, dtype=torch.float64)
    out[:, 0::2] = ang[:, 0::2].sin()
    out[:, 1::2] = ang[:, 1::2].cos()
    return out.float()


def b23_shaw_queries_at_end(q_len, k_len, c, query_offset=0):
    i = (k_len - q_len) + torch.arange(q_len)[:, None]
    j = torch.arange(k_len)[None, :]
    return (j - i).clamp(-c, c) + c


def b23_shift_lk_for_lq(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    r = torch.arange(lq)[:, None]
    j = torch.arange(lk)[None, :]
    cols = (j - r + lk - 1).clamp(0, lk - 1)
    return torch.gather(rel_logits, -1, cols.expand(*rel_logits.shape[:-2], lq, lk))


def _b23_t5(relative_position, bidirectional, num_buckets, max_distance, *, log_over_max=False, exact_plus=0):
    ret = torch.zeros_like(relative_position)
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret = ret + (n < 0).long() * num_buckets
        n = n.abs()
    else:
        n = torch.max(n, torch.zeros_like(n))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    denominator = math.log(max_distance) if log_over_max else math.log(max_distance / max_exact)
    large = max_exact + (torch.log(n.float() / max_exact) / denominator * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return ret + torch.where(is_small, n + exact_plus, large)


def b23_t5_log_over_max_distance(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _b23_t5(relative_position, bidirectional, num_buckets, max_distance, log_over_max=True)


def b23_t5_exact_plus_one(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _b23_t5(relative_position, bidirectional, num_buckets, max_distance, exact_plus=1)


def b23_slopes_rising(n):
    m = 2 ** math.floor(math.log2(n))
    first = [2 ** (-8 + 8 * h / m) for h in range(m)]
    extra = [2 ** (-8 + 8 * h / (2 * m)) for h in range(2 * m)][0::2][: n - m]
    return first + extra


def b23_slopes_as_long(n):
    return torch.tensor(posenc.alibi_slopes(n).tolist(), dtype=torch.long)


def b23_rope2d_rows_reversed(x, rows, columns, base=10000.0):
    return posenc.apply_rope_2d(x, rows.flip(0), columns, base=base)


def b23_blocks_dim_half(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 2, dtype=torch.float64) / dim)
    blocks = []
    for f in theta.tolist():
        for p in (row, column):
            a = p * f
            blocks.append(torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=torch.float64))
    return torch.block_diag(*blocks)


def b23_recovery_truncated(o):
    return (1 / o.double() - 1).long()


def b23_counts_bias_in_part2(positions, width):
    return (positions * width, positions * width + width, 3 * positions * width)


def b23_counts_width_ignored(positions, width):
    return (positions, positions * width, 3 * positions * width)


def b23_concat_interleaved(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    ang = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.stack((ang.sin(), ang.cos()), -1).flatten(-2)


def b23_rows_clip_at_l(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option != "clip":
        return reference_extended_rows(table, length, option)
    return table[torch.arange(length).clamp(max=table.shape[0])]


def b23_pi_double_exponent(dim, base, factor):
    ell = torch.arange(0, dim, 2, dtype=torch.float64)
    return base ** (-2 * ell / dim) / factor


def b23_ntk_exponent_over_d_minus_2(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / (dim - 2))


def b23_dynamic_no_factor(dim, base, factor, train_len, seq_len):
    scale = max(seq_len, train_len) / train_len
    return (base * scale ** (dim / (dim - 2))) ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b23_yarn_pi_everywhere(dim, base, factor, train_len, beta_fast, beta_slow):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim) / factor


def b23_llama_high_multiplied(dim, base, factor, train_len, low, high):
    inv = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    wavelen = 2 * math.pi / inv
    low_wavelen, high_wavelen = train_len / low, train_len * high
    smooth = (train_len / wavelen - low) / (high - low)
    blended = (1 - smooth) * inv / factor + smooth * inv
    out = torch.where(wavelen > low_wavelen, inv / factor, inv)
    middle = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
    return torch.where(middle, blended, out)


HELDOUT_BATCH_23 = [
    Heldout("check_attention", "output divided by sqrt(d)", b23_attention_output_scaled,
            ("scores", "before the softmax", "output")),
    Heldout("check_attention", "weights transposed", b23_attention_weights_transposed,
            ("transpos", "axes", "permuted", "exchanged")),
    Heldout("check_cross_attention", "softmax over every score", b23_cross_softmax_flattened,
            ("each query", "dim=-1", "row")),
    Heldout("check_cross_attention", "values with w_k", b23_cross_values_with_w_k, ("w_v", "W_V")),
    Heldout("check_decayed_rows", "factor only", b23_decay_factor_only, ("initial", "start", "times the rows")),
    Heldout("check_alibi_bias_from_slopes", "slopes squared", b23_alibi_slopes_squared, ("square", "²", "power 2")),
    Heldout("check_alibi_bias_at_positions", "keys only", b23_at_positions_keys_only,
            ("p_i", "difference", "query", "diagonal")),
    Heldout("check_reversal_gap", "gap per position", b23_gap_per_position, ("one number", "scalar", "max")),
    Heldout("check_unrotated_outputs", "positions halved", b23_unrotate_half_positions,
            ("positions/2", "halved", "half")),
    Heldout("check_linear_rope_attention", "not causal", b23_linear_not_causal, ("causal", "tril", "later")),
    Heldout("check_linear_rope_attention", "elu without + 1", b23_linear_elu_without_one,
            ("+ 1", "feature", "elu(x) + 1")),
    Heldout("check_decode_positions", "the last cached positions", b23_decode_last_of_cache,
            ("cache_len - num_new", "start", "first free", "num_new")),
    Heldout("check_streaming_cache", "window skips the last key", b23_stream_window_skips_last,
            ("last", "39", "positions")),
    Heldout("check_streaming_cache", "four sinks hard-coded", b23_stream_four_sinks, ("sinks",)),
    Heldout("check_expected_score", "no sum over the pairs", b23_expected_per_pair, ("sum", "pairs", "axis")),
    Heldout("check_score_asymmetry", "sum instead of difference", b23_asymmetry_sum,
            ("s(δ) - s(-δ)", "sum", "symmetric", "minus", "difference")),
    Heldout("check_positional_head_query", "unit vector for the key", b23_head_unit_vector,
            ("key", "does not use")),
    Heldout("check_slowest_wavelength", "fastest pair", b23_wavelength_fastest,
            ("fastest", "slowest", "last pair", "does not use", "d/2 - 1")),
    Heldout("check_apply_rope", "cat(freqs, freqs) with interleaved pairs", b23_rope_cat_frequencies,
            ("cat", "repeat_interleave", "frequenc", "pair")),
    Heldout("check_apply_rope", "positions + 0.5", b23_rope_half_offset, ("+ 0.5", "1/2", "0.5")),
    Heldout("check_repeat_kv", "repeated along the last axis", b23_repeat_last_axis,
            ("axis", "dim", "-3", "head")),
    Heldout("check_padded_positions", "counts the padding", b23_padded_counts_padding,
            ("real tokens", "!=", "padding")),
    Heldout("check_sinusoidal", "float16 angles", b23_sinusoidal_float16, ("precision", "float16", "half")),
    Heldout("check_sinusoidal", "exponent per column", b23_sinusoidal_column_exponent,
            ("share", "same frequency", "2ℓ+1", "different frequencies")),
    Heldout("check_shaw_index", "queries at the end of the keys", b23_shaw_queries_at_end,
            ("query_offset", "k_len - q_len")),
    Heldout("check_relative_shift", "Lk where Lq belongs", b23_shift_lk_for_lq, ("Lq", "memory")),
    Heldout("check_t5_bucket", "log over max_distance", b23_t5_log_over_max_distance,
            ("max_distance / max_exact", "normalis")),
    Heldout("check_t5_bucket", "exact range + 1", b23_t5_exact_plus_one, ("off by one", "+1", "one more", "exact")),
    Heldout("check_alibi_slopes", "rising slopes", b23_slopes_rising, ("revers", "order", "rise", "grow")),
    Heldout("check_alibi_slopes", "slopes as integers", b23_slopes_as_long, ("dtype", "float", "integer")),
    Heldout("check_apply_rope_2d", "rows reversed", b23_rope2d_rows_reversed, ("revers", "rows")),
    Heldout("check_rope_matrix_2d_blocks", "d/2 blocks", b23_blocks_dim_half, ("d/4", "dim // 4", "blocks")),
    Heldout("check_position_recovery", "truncated", b23_recovery_truncated, ("round", "trunc", "nearest")),
    Heldout("check_position_parameter_counts", "bias in part 2", b23_counts_bias_in_part2, ("bias", "+ d", "+d")),
    Heldout("check_position_parameter_counts", "width ignored in part 1", b23_counts_width_ignored,
            ("width", "d")),
    Heldout("check_concatenated_sinusoidal", "interleaved", b23_concat_interleaved,
            ("interleav", "concatenat", "layout")),
    Heldout("check_extended_rows", "clip at L", b23_rows_clip_at_l, ("L - 1", "last valid", "index")),
    Heldout("check_pi_frequencies", "exponent doubled", b23_pi_double_exponent,
            ("4ℓ", "exponent", "d/2", "power 2")),
    Heldout("check_ntk_frequencies", "exponent over d - 2", b23_ntk_exponent_over_d_minus_2,
            ("d - 2", "exponent", "linspace")),
    Heldout("check_dynamic_ntk_frequencies", "factor left out", b23_dynamic_no_factor,
            ("factor", "does not use", "s·n/L")),
    Heldout("check_yarn_frequencies", "PI on every pair", b23_yarn_pi_everywhere,
            ("PI", "every pair", "kept", "fast")),
    Heldout("check_llama3_frequencies", "L times high_freq_factor", b23_llama_high_multiplied,
            ("L / high_freq_factor", "high_freq_factor", "divid")),
]


# --------------------------------------------------------------------------- batch 24 (issue 32, fourth pass)
# Written at about 01:35 UTC on 2026-11-29 (checkers3), after the generalisation that followed batch 23 (a shape read
# from the values, transposed weights, an argument that has no effect, queries placed at the end of the keys, a base
# squared said as a doubled exponent, a pairing said only when every coordinate has a partner), from the exercises'
# statements and references only, before any entry was run; keywords fixed before the run; measured once.


def _b24_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b24_attention_mask_transposed(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask.transpose(-2, -1), float("-inf"))
    w = s.softmax(-1)
    return w @ v, w


def b24_attention_mask_added(q, k, v, mask=None):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s + mask.to(s.dtype)
    w = s.softmax(-1)
    return w @ v, w


def b24_attention_half_scores(q, k, v, mask=None):
    s = (q.half() @ k.half().transpose(-2, -1)).to(q.dtype) / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    w = s.softmax(-1)
    return w @ v, w


def b24_cross_queries_from_z(y, z, w_q, w_k, w_v):
    q, k, v = z @ w_q, z @ w_k, z @ w_v
    return torch.softmax(q @ k.T / math.sqrt(k.shape[1]), -1) @ v


def b24_cross_no_softmax(y, z, w_q, w_k, w_v):
    return ((y @ w_q) @ (z @ w_k).T / math.sqrt(w_k.shape[1])) @ (z @ w_v)


def b24_decay_rate_per_step_divided(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay / steps) ** steps


def b24_alibi_slopes_per_key(slopes, length):
    pos = torch.arange(length, dtype=slopes.dtype)
    return slopes[None, None, :] * (pos[None, :] - pos[:, None])[None]


def b24_at_positions_ranks(slopes, positions):
    ranks = positions.argsort().argsort().double()
    return -slopes.double()[:, None, None] * (ranks[None, :] - ranks[:, None]).abs()


def b24_gap_relative(layer, x):
    rev = torch.arange(x.shape[0] - 1, -1, -1)
    out = layer(x)
    return ((layer(x[rev]) - out[rev]).abs().max() / out.abs().max()).item()


def b24_unrotate_first_position(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -positions[0].expand(positions.shape), base=base)


def b24_unrotate_float16_positions(outputs, positions, base=10000.0):
    return posenc.apply_rope(outputs, -positions.to(torch.float16).double(), base=base)


def b24_linear_numerator_unrotated(q, k, v, base=10000.0):
    fq, fk = torch.nn.functional.elu(q) + 1, torch.nn.functional.elu(k) + 1
    scores = torch.tril(fq @ fk.T)
    return scores @ v / scores.sum(-1, keepdim=True)


def b24_decode_ignores_cache(cache_len, num_new):
    return torch.arange(num_new)


def b24_stream_sinks_from_end(cached, window, sinks=4):
    n = cached.shape[-2]
    moved = posenc.apply_rope(cached[..., n - window:, :], torch.full((window,), -(n - window - sinks)))
    return torch.cat((cached[..., n - window - sinks:n - window, :], moved), dim=-2)


def b24_expected_exponent_l_over_d(cross, offsets, base=10000.0):
    dim = 2 * cross.shape[0]
    theta = base ** (-torch.arange(dim // 2, dtype=torch.float64) / dim)
    ang = offsets.double()[:, None] * theta
    c = cross.double()
    return ang.cos() @ (c[:, 0, 0] + c[:, 1, 1]) + ang.sin() @ (c[:, 1, 0] - c[:, 0, 1])


def b24_asymmetry_real_part(query, key, offsets, base=10000.0):
    theta = _b24_theta(query.shape[-1], base)
    q, k = query.double(), key.double()
    real = q[0::2] * k[0::2] + q[1::2] * k[1::2]
    return -2 * torch.sin(offsets.double()[:, None] * theta) @ real


def b24_head_first_half_pairs(key, target, base=10000.0):
    out = posenc.apply_rope(key[None], torch.tensor([target]), base=base)[0].clone()
    half = key.shape[-1] // 2
    out[half:] = key[half:]
    return out


def b24_wavelength_pairs_as_dim(dim, base):
    return 2 * math.pi * base ** (1 - 2 / (dim // 2))


def b24_rope_reflection(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    ang = pos.double()[:, None] * _b24_theta(x.shape[-1], base)
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin - b * cos), -1).flatten(-2)


def b24_rope_inverse_frequencies(x, positions=None, base=10000.0):
    pos = torch.arange(x.shape[-2]) if positions is None else positions
    inv = base ** (torch.arange(0, x.shape[-1], 2, dtype=torch.float64) / x.shape[-1])
    return _b24_rope_with(x, pos, inv)


def _b24_rope_with(x, pos, freqs):
    ang = pos.double()[:, None] * freqs
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2)


def b24_repeat_num_heads_times(kv, num_heads):
    return kv.repeat_interleave(num_heads, dim=-3)


def b24_padded_float(input_ids, padding_idx=1):
    mask = (input_ids != padding_idx).float()
    return mask.cumsum(-1) * mask + padding_idx


def b24_sinusoidal_transposed(seq_len, dim, base=10000.0):
    ang = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b24_theta(dim, base)
    return torch.stack((ang.sin(), ang.cos()), -1).flatten(-2).T.contiguous().float()


def b24_sinusoidal_no_minus(seq_len, dim, base=10000.0):
    ang = torch.arange(seq_len, dtype=torch.float64)[:, None] * base ** (torch.arange(0, dim, 2) / dim)
    return torch.stack((ang.sin(), ang.cos()), -1).flatten(-2).float()


def b24_shaw_keys_from_q_len(q_len, k_len, c, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(q_len)[None, :]
    return (j - i).clamp(-c, c) + c


def b24_shift_column_j_plus_r(rel_logits):
    lq, lk = rel_logits.shape[-2:]
    cols = (torch.arange(lk)[None, :] + torch.arange(lq)[:, None]).clamp(max=lk - 1)
    return torch.gather(rel_logits, -1, cols.expand(*rel_logits.shape[:-2], lq, lk))


def b24_t5_float_buckets(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return posenc.t5_relative_position_bucket(relative_position, bidirectional, num_buckets, max_distance).float()


def b24_t5_upper_at_num_buckets(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    if not bidirectional:
        return posenc.t5_relative_position_bucket(relative_position, False, num_buckets, max_distance)
    half = num_buckets // 2
    causal = posenc.t5_relative_position_bucket(-relative_position.abs(), False, half, max_distance)
    return causal + (relative_position > 0).long() * num_buckets


def b24_slopes_logspace(n):
    return torch.logspace(-1, -8, n, base=2.0)


def b24_rope2d_rows_times_width(x, rows, columns, base=10000.0):
    width = int(columns.max()) + 1
    return posenc.apply_rope_2d(x, rows * width, columns, base=base)


def b24_rope2d_halves_swapped(x, rows, columns, base=10000.0):
    out = posenc.apply_rope_2d(x, rows, columns, base=base)
    half = x.shape[-1] // 2
    return torch.cat((out[..., half:], out[..., :half]), -1)


def b24_blocks_column_first(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    blocks = []
    for f in theta.tolist():
        for p in (column, row):
            a = p * f
            blocks.append(torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=torch.float64))
    return torch.block_diag(*blocks)


def b24_recovery_half_precision(o):
    return ((1 / o).round() - 1).long()


def b24_counts_padding_row(positions, width):
    return ((positions + 1) * width, positions * width, 3 * positions * width)


def b24_concat_over_d_minus_1(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (dim - 1))
    ang = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((ang.sin(), ang.cos()), dim=-1)


def b24_rows_clip_to_first(table, length, option):
    from posenc.exercises.extrapolation import reference_extended_rows

    if option != "clip":
        return reference_extended_rows(table, length, option)
    index = torch.arange(length)
    return table[torch.where(index < table.shape[0], index, torch.zeros_like(index))]


def b24_pi_factor_in_base(dim, base, factor):
    return (base * factor) ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b24_ntk_divided(dim, base, factor):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim) / factor ** (dim / (dim - 2))


def b24_dynamic_min(dim, base, factor, train_len, seq_len):
    n = min(seq_len, train_len)
    scale = factor * n / train_len - (factor - 1)
    return (base * scale ** (dim / (dim - 2))) ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b24_yarn_fast_for_both(dim, base, factor, train_len, beta_fast, beta_slow):
    return posenc.yarn_frequencies(dim, base, factor=factor, original_max_position=train_len,
                                   beta_fast=beta_fast, beta_slow=beta_fast - 1e-6)


def b24_llama_share_inverted(dim, base, factor, train_len, low, high):
    inv = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    wavelen = 2 * math.pi / inv
    smooth = (train_len / wavelen - high) / (low - high)
    blended = (1 - smooth) * inv / factor + smooth * inv
    out = torch.where(wavelen > train_len / low, inv / factor, inv)
    middle = (wavelen >= train_len / high) & (wavelen <= train_len / low)
    return torch.where(middle, blended, out)


HELDOUT_BATCH_24 = [
    Heldout("check_attention", "mask transposed", b24_attention_mask_transposed, ("transpos", "mask.T")),
    Heldout("check_attention", "mask added", b24_attention_mask_added, ("-inf", "add", "additive")),
    Heldout("check_attention", "scores in half precision", b24_attention_half_scores,
            ("precision", "half", "float16")),
    Heldout("check_cross_attention", "queries from z", b24_cross_queries_from_z, ("y", "queries")),
    Heldout("check_cross_attention", "no softmax", b24_cross_no_softmax, ("softmax", "sum to 1")),
    Heldout("check_decayed_rows", "rate divided by the steps", b24_decay_rate_per_step_divided,
            ("/ T", "divided", "lr wd / T")),
    Heldout("check_alibi_bias_from_slopes", "a slope per key", b24_alibi_slopes_per_key,
            ("axis", "head", "slopes[:, None, None]")),
    Heldout("check_alibi_bias_at_positions", "ranks of the positions", b24_at_positions_ranks,
            ("rank", "index", "given positions", "0, ..., L-1")),
    Heldout("check_reversal_gap", "relative gap", b24_gap_relative, ("divid", "normalis", "relative")),
    Heldout("check_unrotated_outputs", "the first position for every row", b24_unrotate_first_position,
            ("positions[0]", "own position", "every row")),
    Heldout("check_unrotated_outputs", "float16 positions", b24_unrotate_float16_positions,
            ("precision", "float16", "half")),
    Heldout("check_linear_rope_attention", "numerator not rotated", b24_linear_numerator_unrotated,
            ("not rotated", "rotate")),
    Heldout("check_decode_positions", "cache ignored", b24_decode_ignores_cache, ("cache_len",)),
    Heldout("check_streaming_cache", "sinks from the end", b24_stream_sinks_from_end, ("sinks", "first")),
    Heldout("check_expected_score", "exponent ℓ/d", b24_expected_exponent_l_over_d, ("2ℓ/d", "exponent")),
    Heldout("check_score_asymmetry", "real part", b24_asymmetry_real_part, ("Im", "imaginary", "real")),
    Heldout("check_positional_head_query", "first half of the pairs", b24_head_first_half_pairs,
            ("pair", "not rotated")),
    Heldout("check_slowest_wavelength", "d/2 as the dimension", b24_wavelength_pairs_as_dim,
            ("d/2", "pairs", "dim // 2")),
    Heldout("check_apply_rope", "a reflection", b24_rope_reflection, ("sign", "rotation", "reflect")),
    Heldout("check_apply_rope", "inverse frequencies", b24_rope_inverse_frequencies, ("minus", "grow", "sign")),
    Heldout("check_repeat_kv", "num_heads times each", b24_repeat_num_heads_times,
            ("num_heads // h_kv", "h / h_kv", "too many", "times")),
    Heldout("check_padded_positions", "float positions", b24_padded_float, ("dtype", "integer", "long")),
    Heldout("check_sinusoidal", "transposed", b24_sinusoidal_transposed, ("axes", "permuted", "transpos")),
    Heldout("check_sinusoidal", "no minus in the exponent", b24_sinusoidal_no_minus,
            ("minus", "sign", "grow", "reciprocal")),
    Heldout("check_shaw_index", "keys from q_len", b24_shaw_keys_from_q_len, ("k_len",)),
    Heldout("check_relative_shift", "column j + r", b24_shift_column_j_plus_r, ("j + r", "column")),
    Heldout("check_t5_bucket", "float buckets", b24_t5_float_buckets, ("dtype", "integer", "long")),
    Heldout("check_t5_bucket", "upper half at num_buckets", b24_t5_upper_at_num_buckets,
            ("num_buckets // 2", "upper half", "range")),
    Heldout("check_alibi_slopes", "logspace", b24_slopes_logspace, ("step", "8/n", "ratio")),
    Heldout("check_apply_rope_2d", "rows times the width", b24_rope2d_rows_times_width, ("rows", "positions")),
    Heldout("check_apply_rope_2d", "halves swapped", b24_rope2d_halves_swapped, ("halves", "swap", "second half")),
    Heldout("check_rope_matrix_2d_blocks", "column block first", b24_blocks_column_first,
            ("order", "swap", "column", "row")),
    Heldout("check_position_recovery", "1/o in half precision", b24_recovery_half_precision,
            ("precision", "float16", "double", "float64")),
    Heldout("check_position_parameter_counts", "a padding row", b24_counts_padding_row,
            ("N + 1", "+ d", "extra row", "padding")),
    Heldout("check_concatenated_sinusoidal", "exponent over d - 1", b24_concat_over_d_minus_1,
            ("d/2 - 1", "half - 1", "exponent")),
    Heldout("check_extended_rows", "clip to the first row", b24_rows_clip_to_first, ("last row", "L - 1", "row 0")),
    Heldout("check_pi_frequencies", "factor in the base", b24_pi_factor_in_base, ("base", "divide")),
    Heldout("check_ntk_frequencies", "PI by s^(d/(d-2))", b24_ntk_divided, ("base", "divide", "exponent")),
    Heldout("check_dynamic_ntk_frequencies", "min for max", b24_dynamic_min, ("max", "min")),
    Heldout("check_yarn_frequencies", "beta_fast for both edges", b24_yarn_fast_for_both,
            ("beta_slow", "does not depend")),
    Heldout("check_llama3_frequencies", "share inverted", b24_llama_share_inverted,
            ("share", "invert", "swapped", "kept")),
]


# The parts of a message that only echo the student's input or code, or restate what was compared, whatever
# the mistake: a keyword found there does not name the mistake.

# Batch 25 (issue 32, fifth pass): written on 2026-11-29 at about 04:15-05:00 UTC by a separate session from the
# exercises and solutions in the notebooks and each checker's signature and first docstring line only, while the
# checkers were being changed by another session that did not see it; measured once, after that session's last change.


def _theta(dim, base=10000.0):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def _rope_interleaved(x, positions, base=10000.0, sign=1.0, float32=False):
    """A student's own interleaved RoPE, used by several answers below."""
    dim = x.shape[-1]
    if float32:
        angles = positions.float()[:, None] * _theta(dim, base).float()
    else:
        angles = positions.double()[:, None] * _theta(dim, base)
    cos, sin = angles.cos().to(x.dtype), (sign * angles.sin()).to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2)


# --------------------------------------------------------------------------- attention (ch. 1)

def b25_attention_scale_by_length(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])  # divides by the number of keys
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(-1)
    return weights @ v, weights


def b25_attention_mask_ignored(q, k, v, mask=None):
    weights = torch.softmax(torch.einsum("...qd,...kd->...qk", q, k) / q.shape[-1] ** 0.5, dim=-1)
    return weights @ v, weights


def b25_attention_log_softmax(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = F.log_softmax(scores, dim=-1)
    return weights.exp() @ v, weights  # output right, but the weights returned are log-probabilities


def b25_cross_values_from_queries(y, z, w_q, w_k, w_v):
    q, k = y @ w_q, z @ w_k
    weights = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ (z @ w_q)  # values projected with W_Q


def b25_cross_keys_with_wq(y, z, w_q, w_k, w_v):
    q, k, v = y @ w_q, z @ w_q, z @ w_v
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1) @ v


def b25_cross_scale_model_width(y, z, w_q, w_k, w_v):
    q, k, v = y @ w_q, z @ w_k, z @ w_v
    return torch.softmax(q @ k.T / math.sqrt(y.shape[-1]), dim=-1) @ v  # sqrt(d), not sqrt(d_h)


def b25_recovery_floor(outputs):
    return torch.floor(1.0 / outputs.double() - 1.0)


def b25_recovery_no_minus_one(outputs):
    return torch.round(1.0 / outputs.double())


# --------------------------------------------------------------------------- absolute (ch. 2)

def b25_counts_whole_map(positions, width):
    return positions * width, (width + positions) * width, 3 * positions * width


def b25_counts_whole_projections(positions, width):
    return positions * width, positions * width, 3 * (width + positions) * width


def b25_decay_without_lr(initial, lr, weight_decay, steps):
    return initial * (1 - weight_decay) ** steps


def b25_decay_linear(initial, lr, weight_decay, steps):
    return initial * (1 - steps * lr * weight_decay)


def b25_decay_one_step_short(initial, lr, weight_decay, steps):
    # "the first step only sets up the moments", so one decay fewer
    return initial * (1 - lr * weight_decay) ** (steps - 1)


def b25_padded_hard_coded_pad(input_ids, padding_idx=1):
    real = (input_ids != 1).long()
    return real.cumsum(-1) * real + 1


def b25_padded_pads_counted(input_ids, padding_idx=1):
    real = input_ids.ne(padding_idx).long()
    return real.cumsum(dim=-1) + padding_idx  # pads also get the running count


def b25_padded_start_at_pad(input_ids, padding_idx=1):
    real = (input_ids != padding_idx).long()
    return (real.cumsum(-1) - 1) * real + padding_idx  # first token gets padding_idx


# --------------------------------------------------------------------------- sinusoidal (ch. 3)

def b25_sin_concatenated(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _theta(dim, base)
    return torch.cat((angles.sin(), angles.cos()), -1).float()


def b25_sin_exponent_l_over_d(seq_len, dim, base=10000.0):
    inv = base ** (-torch.arange(dim // 2, dtype=torch.float64) / dim)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * inv
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2).float()


def b25_sin_float32_angles(seq_len, dim, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(base) / dim))
    out = torch.zeros(seq_len, dim)
    out[:, 0::2] = torch.sin(pos * div)
    out[:, 1::2] = torch.cos(pos * div)
    return out


def b25_sin_cos_first(seq_len, dim, base=10000.0):
    pos = np.arange(seq_len)[:, None]
    angles = pos / base ** (np.arange(0, dim, 2) / dim)
    table = np.empty((seq_len, dim))
    table[:, 0::2], table[:, 1::2] = np.cos(angles), np.sin(angles)
    return torch.from_numpy(table).float()


def b25_t2t_half_denominator(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / half)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), dim=-1)


def b25_t2t_interleaved(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.stack((angles.sin(), angles.cos()), dim=-1).reshape(seq_len, dim)


def b25_t2t_cos_then_sin(seq_len, dim, base=10000.0):
    half = dim // 2
    log_step = math.log(base) / (half - 1)
    theta = torch.exp(-log_step * torch.arange(half, dtype=torch.float64))
    angles = torch.arange(seq_len, dtype=torch.float64).unsqueeze(1) * theta.unsqueeze(0)
    return torch.cat([torch.cos(angles), torch.sin(angles)], dim=1)


# --------------------------------------------------------------------------- relative (ch. 4)

def _t5_reference_like(relative_position, bidirectional, num_buckets, max_distance, *, sign_flip=False,
                       causal_future=False, log_of_max=False, no_clamp=False):
    offsets = torch.as_tensor(relative_position).long()
    n_b = num_buckets // 2 if bidirectional else num_buckets
    if bidirectional:
        first = torch.where((offsets < 0) if sign_flip else (offsets > 0), n_b, 0)
        rho = offsets.abs()
    else:
        first = 0
        rho = offsets.clamp(min=0) if causal_future else (-offsets).clamp(min=0)
    e = n_b // 2
    denominator = math.log(max_distance) if log_of_max else math.log(max_distance / e)
    far = e + (torch.log(rho.clamp(min=1).float() / e) / denominator * (n_b - e)).long()
    if not no_clamp:
        far = far.clamp(max=n_b - 1)
    return first + torch.where(rho < e, rho, far)


def b25_t5_direction_flipped(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _t5_reference_like(relative_position, bidirectional, num_buckets, max_distance, sign_flip=True)


def b25_t5_causal_future(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _t5_reference_like(relative_position, bidirectional, num_buckets, max_distance, causal_future=True)


def b25_t5_log_of_max_distance(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _t5_reference_like(relative_position, bidirectional, num_buckets, max_distance, log_of_max=True)


def b25_t5_no_last_bucket_clamp(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _t5_reference_like(relative_position, bidirectional, num_buckets, max_distance, no_clamp=True)


def b25_t5_hard_coded_32(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    rp = torch.as_tensor(relative_position).long()
    n = 16 if bidirectional else 32  # T5's 32 buckets, whatever num_buckets says
    ret = (rp > 0).long() * n if bidirectional else torch.zeros_like(rp)
    rho = rp.abs() if bidirectional else torch.clamp(-rp, min=0)
    exact = n // 2
    large = exact + (torch.log(rho.float() / exact) / math.log(max_distance / exact) * (n - exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, n - 1))
    return ret + torch.where(rho < exact, rho, large)


def b25_alibi_slopes_sign(slopes, length):
    i = torch.arange(length)
    return slopes[:, None, None] * (i[:, None] - i[None, :]).float()  # i - j


def b25_alibi_slopes_recomputed(slopes, length):
    h = len(slopes)
    own = torch.tensor([2 ** (-8 * r / h) for r in range(1, h + 1)])  # ignores the slopes passed in
    j = torch.arange(length)
    return own.view(-1, 1, 1) * (j[None, :] - j[:, None])


def b25_alibi_slopes_half(slopes, length):
    rel = (torch.arange(length)[None, :] - torch.arange(length)[:, None]).half()
    return (slopes.half()[:, None, None] * rel).float()


def b25_reversal_features_flipped(layer, x):
    return (layer(x.flip(-1)) - layer(x).flip(-1)).abs().max()


def b25_reversal_mean(layer, x):
    rev = torch.arange(x.shape[-2] - 1, -1, -1)
    return (layer(x[rev]) - layer(x)[rev]).abs().mean()


def b25_reversal_output_not_reversed(layer, x):
    return (layer(x.flip(0)) - layer(x)).abs().max().item()


def b25_shaw_ignores_offset(q_len, k_len, max_distance, query_offset=0):
    offsets = torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
    return offsets.clamp(-max_distance, max_distance) + max_distance


def b25_shaw_i_minus_j(q_len, k_len, max_distance, query_offset=0):
    i = torch.arange(q_len)[:, None] + query_offset
    j = torch.arange(k_len)[None, :]
    return torch.clamp(i - j, -max_distance, max_distance) + max_distance


def b25_shaw_shift_then_clip(q_len, k_len, max_distance, query_offset=0):
    c = max_distance
    return torch.tensor([[max(-c, min(c, j - (i + query_offset) + c)) for j in range(k_len)]
                         for i in range(q_len)])  # shifted by c first, then clipped


def b25_shaw_offset_on_keys(q_len, k_len, max_distance, query_offset=0):
    keys = query_offset + torch.arange(k_len)
    return (keys[None, :] - torch.arange(q_len)[:, None]).clamp(-max_distance, max_distance) + max_distance


def b25_relshift_square_skew(rel_logits):
    *batch, length, _ = rel_logits.shape  # the chapter's skew, as if L_k = L_q
    padded = F.pad(rel_logits, (1, 0))
    return padded.reshape(*batch, length + 1, length)[..., 1:, :]


def b25_relshift_pad_right(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = F.pad(rel_logits, (0, 1))
    rows = padded.reshape(*batch, k_len + 1, q_len)[..., :-1, :]
    return rows.reshape(*batch, q_len, k_len)


def b25_relshift_roll_wrong_way(rel_logits):
    q_len = rel_logits.shape[-2]
    rows = [torch.roll(rel_logits[..., r, :], shifts=-r, dims=-1) for r in range(q_len)]  # by r, not Lq-1-r
    return torch.stack(rows, dim=-2)


def b25_alibi_rule_no_power_of_two(num_heads):
    return torch.tensor([2 ** (-8 * h / num_heads) for h in range(1, num_heads + 1)])


def b25_alibi_rule_halving(num_heads):
    return 0.5 ** torch.arange(1, num_heads + 1, dtype=torch.float32)


def b25_alibi_rule_from_zero(num_heads):
    power = 2 ** math.floor(math.log2(num_heads))
    first = [2 ** (-8 * h / power) for h in range(power)]
    extra = [2 ** (-8 * (2 * h - 1) / (2 * power)) for h in range(1, num_heads - power + 1)]
    return torch.tensor(first + extra)


# --------------------------------------------------------------------------- RoPE (ch. 5 and 6)

def b25_rope_half_layout(x, positions=None, base=10000.0):
    seq_len, dim = x.shape[-2:]
    positions = torch.arange(seq_len) if positions is None else positions
    angles = positions.double()[:, None] * _theta(dim, base)
    angles = torch.cat((angles, angles), -1)
    x1, x2 = x[..., : dim // 2], x[..., dim // 2:]
    rotated = torch.cat((-x2, x1), -1)
    return x * angles.cos().to(x.dtype) + rotated * angles.sin().to(x.dtype)


def b25_rope_ignores_base(x, positions=None, base=10000.0):
    positions = torch.arange(x.shape[-2]) if positions is None else positions
    return _rope_interleaved(x, positions, 10000.0)


def b25_rope_float32_angles(x, positions=None, base=10000.0):
    positions = torch.arange(x.shape[-2]) if positions is None else positions
    return _rope_interleaved(x, positions, base, float32=True)


def b25_rope_complex_conjugate(x, positions=None, base=10000.0):
    seq_len, dim = x.shape[-2:]
    positions = torch.arange(seq_len) if positions is None else positions
    pairs = torch.view_as_complex(x.double().reshape(*x.shape[:-1], dim // 2, 2).contiguous())
    angles = positions.double()[:, None] * _theta(dim, base)
    turned = pairs * torch.exp(-1j * angles)  # clockwise
    return torch.view_as_real(turned).flatten(-2).to(x.dtype)


def b25_rope2d_swapped(x, rows, columns, base=10000.0):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((apply_rope(first, columns, base=base), apply_rope(second, rows, base=base)), -1)


def b25_rope2d_even_odd_halves(x, rows, columns, base=10000.0):
    out = torch.empty_like(x)
    out[..., 0::2] = apply_rope(x[..., 0::2], rows, base=base)
    out[..., 1::2] = apply_rope(x[..., 1::2], columns, base=base)
    return out


def b25_rope2d_full_width_frequencies(x, rows, columns, base=10000.0):
    dim = x.shape[-1]
    theta = _theta(dim, base)[: dim // 4]  # the first d/4 frequencies of a d-wide head
    first, second = x.chunk(2, dim=-1)
    return torch.cat((apply_rope(first, rows, frequencies=theta), apply_rope(second, columns, frequencies=theta)), -1)


def b25_repeat_kv_tiled(kv, num_heads):
    group = num_heads // kv.shape[-3]
    reps = [1] * kv.dim()
    reps[-3] = group
    return kv.repeat(*reps)


def b25_repeat_kv_first_axis(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=0)


def b25_repeat_kv_count_is_heads(kv, num_heads):
    return torch.repeat_interleave(kv, num_heads, dim=-3)


def b25_decode_one_late(cache_len, num_new):
    return torch.arange(cache_len + 1, cache_len + num_new + 1)


def b25_decode_restart(cache_len, num_new):
    return torch.arange(num_new)


def b25_stream_forward_rotation(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    moved = apply_rope(cached[..., total - window:, :], torch.full((window,), shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b25_stream_four_sinks(cached, window, sinks=4):
    total = cached.shape[-2]
    moved = apply_rope(cached[..., -window:, :], torch.full((window,), -(total - window - 4)))
    return torch.cat((cached[..., :4, :], moved), dim=-2)


def b25_stream_shift_off_by_one(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks + 1
    moved = apply_rope(cached[..., total - window:, :], torch.full((window,), -shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b25_blocks_one_d_ladder(row, column, dim, base=10000.0):
    theta = base ** (-2 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    angles = torch.stack((row * theta, column * theta), -1).flatten()
    blocks = [torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=torch.float64)
              for a in angles.tolist()]
    return torch.block_diag(*blocks)


def b25_blocks_transposed(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    out = torch.zeros(dim, dim, dtype=torch.float64)
    for pair, t in enumerate(theta.tolist()):
        for p, m in enumerate((row, column)):
            c, s = math.cos(m * t), math.sin(m * t)
            k = 4 * pair + 2 * p
            out[k, k], out[k, k + 1], out[k + 1, k], out[k + 1, k + 1] = c, s, -s, c
    return out


def b25_blocks_column_first(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    angles = torch.stack((column * theta, row * theta), -1).flatten()
    return torch.block_diag(*[torch.stack([torch.stack([a.cos(), -a.sin()]), torch.stack([a.sin(), a.cos()])])
                              for a in angles])


# --------------------------------------------------------------------------- long range (ch. 7)

def b25_wavelength_no_two_pi(dim, base):
    return base ** (1 - 2 / dim)


def b25_wavelength_last_index_d_over_2(dim, base):
    return 2 * math.pi * base ** ((dim // 2) * 2 / dim)  # pair d/2, one past the last


def b25_expected_sine_sign(cross, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(2 * len(cross), base)
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1])
            + angles.sin() * (cross[:, 0, 1] - cross[:, 1, 0])).sum(-1)


def b25_expected_trace_only(cross, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(2 * len(cross), base)
    return (angles.cos() * torch.diagonal(cross, dim1=-2, dim2=-1).sum(-1)).sum(-1)


def b25_expected_dim_is_pairs(cross, offsets, base=10000.0):
    theta = base ** (-torch.arange(0, len(cross), 2, dtype=torch.float64) / len(cross))
    theta = torch.cat((theta, theta))[: len(cross)]
    angles = offsets.double()[:, None] * theta
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1])
            + angles.sin() * (cross[:, 1, 0] - cross[:, 0, 1])).sum(-1)


def _score(query, key, delta, base):
    return (query[None] * _rope_interleaved(key[None].expand(len(delta), -1), delta, base)).sum(-1)


def b25_asym_reversed(query, key, offsets, base=10000.0):
    delta = offsets.double()
    return _score(query.double(), key.double(), -delta, base) - _score(query.double(), key.double(), delta, base)


def b25_asym_numpy_key_conjugated(query, key, offsets, base=10000.0):
    q = query.double().numpy()
    k = key.double().numpy()
    qc, kc = q[0::2] + 1j * q[1::2], k[0::2] + 1j * k[1::2]
    eta = qc * np.conj(kc)  # conjugate on the key
    theta = base ** (-np.arange(0, len(q), 2) / len(q))
    ang = offsets.double().numpy()[:, None] * theta
    return torch.from_numpy((eta * np.exp(1j * ang)).real.sum(-1) - (eta * np.exp(-1j * ang)).real.sum(-1))


def b25_asym_half_pairs(query, key, offsets, base=10000.0):
    half = query.shape[-1] // 2
    qc = torch.complex(query[:half].double(), query[half:].double())
    kc = torch.complex(key[:half].double(), key[half:].double())
    eta = qc.conj() * kc
    angles = offsets.double()[:, None] * rope_frequencies(query.shape[-1], base)
    return -2 * (eta.imag * angles.sin()).sum(-1)


def b25_head_query_opposite(key, target, base=10000.0):
    return apply_rope(key[None], torch.tensor([-target]), base=base)[0]


def b25_head_query_half_layout(key, target, base=10000.0):
    return apply_rope(key[None], torch.tensor([target]), base=base, layout="half")[0]


def b25_head_query_ignores_base(key, target, base=10000.0):
    return _rope_interleaved(key[None], torch.tensor([float(target)]), 10000.0)[0]


def _phi(x):
    return F.elu(x) + 1


def b25_linear_rope_rotated_denominator(q, k, v, base=10000.0):
    rq, rk = apply_rope(_phi(q), base=base), apply_rope(_phi(k), base=base)
    num = torch.cumsum(rk[:, :, None] * v[:, None, :], dim=0)
    den = torch.cumsum(rk, dim=0)
    return torch.einsum("nd,nde->ne", rq, num) / (rq * den).sum(-1, keepdim=True)


def b25_linear_rope_no_feature_map(q, k, v, base=10000.0):
    rq, rk = apply_rope(q, base=base), apply_rope(k, base=base)
    state = torch.zeros(q.shape[-1], v.shape[-1], dtype=q.dtype)
    norm = torch.zeros(q.shape[-1], dtype=q.dtype)
    out = []
    for i in range(q.shape[0]):
        state += torch.outer(rk[i], v[i])
        norm += k[i]
        out.append(rq[i] @ state / (q[i] @ norm))
    return torch.stack(out)


def b25_linear_rope_not_causal(q, k, v, base=10000.0):
    pq, pk = _phi(q), _phi(k)
    rq, rk = apply_rope(pq, base=base), apply_rope(pk, base=base)
    return (rq @ (rk.T @ v)) / (pq @ pk.sum(0))[:, None]


def b25_linear_rope_excludes_current(q, k, v, base=10000.0):
    pq, pk = _phi(q), _phi(k)
    rq, rk = apply_rope(pq, base=base), apply_rope(pk, base=base)
    state = torch.zeros(q.shape[-1], v.shape[-1], dtype=q.dtype)
    norm = torch.zeros(q.shape[-1], dtype=q.dtype)
    out = []
    for i in range(q.shape[0]):
        out.append(rq[i] @ state / (pq[i] @ norm))  # before adding key i
        state = state + torch.outer(rk[i], v[i])
        norm = norm + pk[i]
    return torch.stack(out)


def b25_unrotate_forward(outputs, positions, base=10000.0):
    return apply_rope(outputs, positions, base=base)  # R_p, not R_p^T


def b25_unrotate_ignores_positions(outputs, positions, base=10000.0):
    return _rope_interleaved(outputs, -torch.arange(outputs.shape[-2]), base)


def b25_unrotate_half_layout(outputs, positions, base=10000.0):
    return apply_rope(outputs, -positions, base=base, layout="half")


# --------------------------------------------------------------------------- trained extrapolation (ch. 8)

def b25_rows_interpolate_endpoint(table, length, option):
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1)]
    if option == "copy":
        return table[torch.arange(length) % rows]
    where = torch.arange(length) * rows / length  # squeezed into [0, L), not [0, L - 1]
    low = where.floor().long().clamp(max=rows - 2)
    frac = (where - low)[:, None]
    return (1 - frac) * table[low] + frac * table[low + 1]


def b25_rows_copy_period_short(table, length, option):
    rows = table.shape[0]
    if option == "clip":
        return table[[min(m, rows - 1) for m in range(length)]]
    if option == "copy":
        return table[[m % (rows - 1) for m in range(length)]]
    where = torch.linspace(0, rows - 1, length)
    low = where.floor().long().clamp(max=rows - 2)
    frac = (where - low)[:, None]
    return torch.lerp(table[low], table[low + 1], frac)


def b25_rows_interpolate_nearest(table, length, option):
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1)]
    if option == "copy":
        return table[torch.arange(length) % rows]
    return table[torch.linspace(0, rows - 1, length).round().long()]


def b25_alibi_at_indices(slopes, positions):
    idx = torch.arange(len(positions), dtype=torch.float64)
    return -slopes[:, None, None] * (idx[None, :] - idx[:, None]).abs()


def b25_alibi_at_plus(slopes, positions):
    return slopes.view(-1, 1, 1) * torch.cdist(positions.double()[:, None], positions.double()[:, None])


def b25_alibi_at_float16(slopes, positions):
    p = positions.half()
    return (-slopes.half()[:, None, None] * (p[None, :] - p[:, None]).abs()).float()


def b25_alibi_at_squared(slopes, positions):
    d = positions[None, :] - positions[:, None]
    return -slopes[:, None, None] * d * d


# --------------------------------------------------------------------------- stretching (ch. 9)

def b25_ntk_no_exponent(dim, base, factor):
    return (base * factor) ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b25_ntk_inverted_exponent(dim, base, factor):
    new_base = base * factor ** ((dim - 2) / dim)
    return 1.0 / new_base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b25_ntk_also_divided(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim) / factor


def b25_dynamic_no_floor(dim, base, factor, original_max_position, seq_len):
    scale = factor * seq_len / original_max_position - (factor - 1)
    return (base * scale ** (dim / (dim - 2))) ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b25_dynamic_missing_shift(dim, base, factor, original_max_position, seq_len):
    scale = factor * max(seq_len, original_max_position) / original_max_position
    return (base * scale ** (dim / (dim - 2))) ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b25_dynamic_static(dim, base, factor, original_max_position, seq_len):
    new_base = base * factor ** (dim / (dim - 2))
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b25_dynamic_ratio_only(dim, base, factor, original_max_position, seq_len):
    scale = max(seq_len / original_max_position, 1.0)
    return 1 / (base * scale ** (dim / (dim - 2))) ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b25_by_parts_no_two_pi(dim, base, factor, train_len, alpha, beta):
    theta = rope_frequencies(dim, base)
    turns = train_len * theta  # radians, not turns
    kept = ((turns - alpha) / (beta - alpha)).clamp(0, 1)
    return (1 - kept) * theta / factor + kept * theta


def b25_by_parts_ramp_reversed(dim, base, factor, train_len, alpha, beta):
    theta = rope_frequencies(dim, base)
    turns = train_len * theta / (2 * math.pi)
    kept = ((beta - turns) / (beta - alpha)).clamp(0, 1)
    return (1 - kept) * theta / factor + kept * theta


def b25_by_parts_times_factor(dim, base, factor, train_len, alpha, beta):
    theta = rope_frequencies(dim, base)
    turns = train_len * theta / (2 * math.pi)
    kept = torch.clamp((turns - alpha) / (beta - alpha), 0, 1)
    return (1 - kept) * theta * factor + kept * theta


def b25_pi_times_factor(dim, base, factor):
    return factor * base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b25_pi_ignores_base(dim, base, factor):
    return 10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim) / factor


def b25_pi_exponent_index(dim, base, factor):
    return base ** (-torch.arange(dim // 2, dtype=torch.float64) / dim) / factor


def _b25_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, *, rounding=True, swap=False,
          flipped=False):
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)

    def pair_at(turns):
        return dim * math.log(original_max_position / (2 * math.pi * turns)) / (2 * math.log(base))

    fast, slow = (beta_slow, beta_fast) if swap else (beta_fast, beta_slow)
    low, high = pair_at(fast), pair_at(slow)
    if rounding:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    if flipped:
        ramp = 1 - ramp
    return theta * (1 - ramp) + theta / factor * ramp


def b25_yarn_ramp_in_turns(dim, base, factor, original_max_position, beta_fast, beta_slow):
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    turns = original_max_position * theta / (2 * math.pi)
    kept = ((turns - beta_slow) / (beta_fast - beta_slow)).clamp(0, 1)  # the paper's ramp, not the code's
    return kept * theta + (1 - kept) * theta / factor


def b25_yarn_no_rounding(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b25_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, rounding=False)


def b25_yarn_betas_swapped(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b25_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, swap=True)


def b25_yarn_ramp_flipped(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b25_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, flipped=True)


HELDOUT_BATCH_25 = [
    Heldout("check_attention", "scores divided by sqrt of the number of keys", b25_attention_scale_by_length,
            ("scale", "sqrt(d", "√d", "temperature", "scaling")),
    Heldout("check_attention", "mask ignored", b25_attention_mask_ignored,
            ("mask", "masked", "-inf", "future")),
    Heldout("check_attention", "weights returned as log-probabilities", b25_attention_log_softmax,
            ("log", "sum to 1", "sum to one", "negative", "probabilit")),
    Heldout("check_cross_attention", "values projected with W_Q", b25_cross_values_from_queries,
            ("W_V", "value projection", "values projected", "w_v")),
    Heldout("check_cross_attention", "keys projected with W_Q", b25_cross_keys_with_wq,
            ("W_K", "key projection", "keys projected", "w_k")),
    Heldout("check_cross_attention", "scaled by the model width, not the head width",
            b25_cross_scale_model_width, ("scale", "d_h", "sqrt", "√", "head width")),
    Heldout("check_position_recovery", "floor instead of round", b25_recovery_floor,
            ("floor", "nearest", "round")),
    Heldout("check_position_recovery", "forgot the - 1", b25_recovery_no_minus_one,
            ("off by one", "one too", "by one", "minus one", "the - 1")),
    Heldout("check_position_parameter_counts", "part 2 counts the token part of the map too",
            b25_counts_whole_map, ("token", "whole", "(d + N)", "d + N", "only the position")),
    Heldout("check_position_parameter_counts", "part 3 counts the whole projections",
            b25_counts_whole_projections, ("token", "whole", "extra", "d + N", "only the position")),
    Heldout("check_decayed_rows", "learning rate left out of the decay", b25_decay_without_lr,
            ("learning rate", "missing factor", "without lr", "lr is missing", "ignores lr")),
    Heldout("check_decayed_rows", "linear instead of compounded decay", b25_decay_linear,
            ("linear", "compound", "power", "1 - T")),
    Heldout("check_decayed_rows", "one step short", b25_decay_one_step_short,
            ("off by one", "steps - 1", "one step", "T - 1")),
    Heldout("check_padded_positions", "padding id hard-coded to 1", b25_padded_hard_coded_pad,
            ("hard-coded", "hard coded", "ignores", "padding index", "other padding")),
    Heldout("check_padded_positions", "pads get the running count", b25_padded_pads_counted,
            ("pads", "padding tokens", "padding positions", "padding slots", "padding gets")),
    Heldout("check_padded_positions", "first real token gets padding_idx", b25_padded_start_at_pad,
            ("off by one", "start", "first real", "padding_idx + 1", "one too")),
    Heldout("check_sinusoidal", "sines then cosines", b25_sin_concatenated,
            ("interleav", "layout", "concatenat", "sines first", "sines then")),
    Heldout("check_sinusoidal", "exponent l/d instead of 2l/d", b25_sin_exponent_l_over_d,
            ("exponent", "2l/d", "2ℓ/d", "2l / d", "frequenc")),
    Heldout("check_sinusoidal", "angles in float32", b25_sin_float32_angles,
            ("float32", "precision", "float64")),
    Heldout("check_sinusoidal", "cosine before sine", b25_sin_cos_first,
            ("cos", "swap", "order", "sine and cosine")),
    Heldout("check_concatenated_sinusoidal", "exponent over d/2, not d/2 - 1", b25_t2t_half_denominator,
            ("d/2 - 1", "half - 1", "exponent", "ladder", "denominator")),
    Heldout("check_concatenated_sinusoidal", "interleaved layout", b25_t2t_interleaved,
            ("concatenat", "layout", "interleav", "sines first")),
    Heldout("check_concatenated_sinusoidal", "cosines first", b25_t2t_cos_then_sin,
            ("cos", "order", "sines first", "swap")),
    Heldout("check_t5_bucket", "future keys in the lower half", b25_t5_direction_flipped,
            ("sign", "direction", "positive", "negative", "upper half", "future")),
    Heldout("check_t5_bucket", "causal buckets count the future", b25_t5_causal_future,
            ("past", "future", "direction", "sign")),
    Heldout("check_t5_bucket", "log of max_distance, not of max_distance / max_exact", b25_t5_log_of_max_distance,
            ("log", "max_exact", "denominator", "logarithm")),
    Heldout("check_t5_bucket", "far offsets not clamped to the last bucket", b25_t5_no_last_bucket_clamp,
            ("clamp", "last bucket", "overflow", "num_buckets - 1", "beyond max_distance")),
    Heldout("check_t5_bucket", "32 buckets hard-coded", b25_t5_hard_coded_32,
            ("hard-coded", "hard coded", "ignores", "bucket count", "number of buckets")),
    Heldout("check_alibi_bias_from_slopes", "i - j instead of j - i", b25_alibi_slopes_sign,
            ("sign", "i - j", "flipped", "positive", "negative")),
    Heldout("check_alibi_bias_from_slopes", "slopes recomputed from the rule", b25_alibi_slopes_recomputed,
            ("ignores", "slopes given", "slopes passed", "recomput", "own slopes")),
    Heldout("check_alibi_bias_from_slopes", "bias built in float16", b25_alibi_slopes_half,
            ("float16", "half precision", "precision")),
    Heldout("check_reversal_gap", "features reversed, not positions", b25_reversal_features_flipped,
            ("axis", "feature", "column", "last dim", "dimension")),
    Heldout("check_reversal_gap", "mean instead of max", b25_reversal_mean,
            ("mean", "max", "largest", "average")),
    Heldout("check_reversal_gap", "output not reversed back", b25_reversal_output_not_reversed,
            ("reverse the output", "output reversed", "not reversed back", "J layer", "invarian", "equivarian")),
    Heldout("check_shaw_index", "query_offset ignored", b25_shaw_ignores_offset,
            ("query offset", "query_offset", "ignores", "cached")),
    Heldout("check_shaw_index", "i - j instead of j - i", b25_shaw_i_minus_j,
            ("sign", "i - j", "mirror", "reversed", "transpos")),
    Heldout("check_shaw_index", "shift before the clip", b25_shaw_shift_then_clip,
            ("shift then clip", "clip before", "before the shift", "negative", "out of range")),
    Heldout("check_shaw_index", "offset added to the keys", b25_shaw_offset_on_keys,
            ("query offset", "query_offset", "keys", "wrong side", "sign")),
    Heldout("check_relative_shift", "the square skew, no memory", b25_relshift_square_skew,
            ("memory", "L_k", "Lk", "square", "skew")),
    Heldout("check_relative_shift", "padded on the right", b25_relshift_pad_right,
            ("pad", "left", "right")),
    Heldout("check_relative_shift", "row r rolled by r", b25_relshift_roll_wrong_way,
            ("wrong direction", "reversed", "Lq - 1 - r", "L_q - 1", "last row", "roll")),
    Heldout("check_alibi_slopes", "one geometric sequence for every head count", b25_alibi_rule_no_power_of_two,
            ("power of two", "power of 2", "non-power", "interleav")),
    Heldout("check_alibi_slopes", "halving slopes", b25_alibi_rule_halving,
            ("exponent", "8/n", "ratio", "2^(-8", "geometric")),
    Heldout("check_alibi_slopes", "first slope 1", b25_alibi_rule_from_zero,
            ("off by one", "start", "first slope", "h = 1", "slope 1")),
    Heldout("check_apply_rope", "half layout", b25_rope_half_layout,
            ("layout", "interleav", "half layout", "rotate_half", "l + d/2")),
    Heldout("check_apply_rope", "base ignored", b25_rope_ignores_base,
            ("ignores", "hard-coded", "hard coded", "10000")),
    Heldout("check_apply_rope", "angles in float32", b25_rope_float32_angles,
            ("float32", "precision", "float64")),
    Heldout("check_apply_rope", "complex, turned clockwise", b25_rope_complex_conjugate,
            ("direction", "sign", "clockwise", "transpos", "inverse", "R_{-m}", "R_-m", "conjugat")),
    Heldout("check_apply_rope_2d", "rows and columns swapped", b25_rope2d_swapped,
            ("swap", "exchang", "columns first", "rows and columns")),
    Heldout("check_apply_rope_2d", "even and odd coordinates as the halves", b25_rope2d_even_odd_halves,
            ("halves", "first half", "chunk", "split", "interleav")),
    Heldout("check_apply_rope_2d", "frequencies of the full width", b25_rope2d_full_width_frequencies,
            ("frequenc", "d/2", "half the dimension", "dimension", "width")),
    Heldout("check_repeat_kv", "repeat instead of repeat_interleave", b25_repeat_kv_tiled,
            ("repeat_interleave", "group", "tile", "order", "consecutive")),
    Heldout("check_repeat_kv", "repeated along the first axis", b25_repeat_kv_first_axis,
            ("axis", "head axis", "dim", "batch")),
    Heldout("check_repeat_kv", "each head repeated num_heads times", b25_repeat_kv_count_is_heads,
            ("too many", "group size", "num_heads //", "count", "h / h_kv")),
    Heldout("check_decode_positions", "starts one after the cache length", b25_decode_one_late,
            ("off by one", "one late", "start", "+ 1")),
    Heldout("check_decode_positions", "restarts at 0", b25_decode_restart,
            ("restart", "from 0", "at 0", "continue", "cache length")),
    Heldout("check_streaming_cache", "window rotated forward", b25_stream_forward_rotation,
            ("sign", "direction", "forward", "back", "opposite")),
    Heldout("check_streaming_cache", "four sinks hard-coded", b25_stream_four_sinks,
            ("hard-coded", "hard coded", "ignores", "number of sinks", "sink count")),
    Heldout("check_streaming_cache", "shift one too many", b25_stream_shift_off_by_one,
            ("off by one", "by one", "one too")),
    Heldout("check_rope_matrix_2d_blocks", "the 1-D ladder b^(-2l/d)", b25_blocks_one_d_ladder,
            ("4l/d", "4ℓ/d", "exponent", "frequenc", "θ'")),
    Heldout("check_rope_matrix_2d_blocks", "blocks transposed", b25_blocks_transposed,
            ("transpos", "sign", "direction", "clockwise", "inverse")),
    Heldout("check_rope_matrix_2d_blocks", "column pair first", b25_blocks_column_first,
            ("swap", "row and column", "exchang", "order")),
    Heldout("check_slowest_wavelength", "2π left out", b25_wavelength_no_two_pi,
            ("2π", "2 pi", "2*pi", "angular", "radians")),
    Heldout("check_slowest_wavelength", "one pair past the last", b25_wavelength_last_index_d_over_2,
            ("exponent", "1 - 2/d", "off by one", "last pair", "d/2 - 1")),
    Heldout("check_expected_score", "sine term with the wrong sign", b25_expected_sine_sign,
            ("sign", "C_10 - C_01", "antisymmetric", "sine term", "flipped")),
    Heldout("check_expected_score", "sine term dropped", b25_expected_trace_only,
            ("sine", "antisymmetric", "odd", "off-diagonal", "trace only")),
    Heldout("check_expected_score", "frequencies for d/2 dimensions", b25_expected_dim_is_pairs,
            ("dimension", "frequenc", "2 * len", "number of pairs", "d/2")),
    Heldout("check_score_asymmetry", "s(-δ) - s(δ)", b25_asym_reversed,
            ("sign", "s(-δ) - s(δ)", "reversed", "negat", "opposite")),
    Heldout("check_score_asymmetry", "conjugate on the key (numpy)", b25_asym_numpy_key_conjugated,
            ("sign", "conjugat", "reversed", "negat", "opposite")),
    Heldout("check_score_asymmetry", "pairs taken from the two halves", b25_asym_half_pairs,
            ("pairing", "interleav", "half layout", "layout", "l + d/2")),
    Heldout("check_positional_head_query", "rotated by -target", b25_head_query_opposite,
            ("sign", "direction", "opposite", "mirror", "+3")),
    Heldout("check_positional_head_query", "half layout", b25_head_query_half_layout,
            ("layout", "interleav", "half layout", "rotate_half", "l + d/2")),
    Heldout("check_positional_head_query", "base ignored", b25_head_query_ignores_base,
            ("ignores", "hard-coded", "hard coded", "10000")),
    Heldout("check_linear_rope_attention", "rotated denominator", b25_linear_rope_rotated_denominator,
            ("denominator", "normalis", "normaliz", "unrotated")),
    Heldout("check_linear_rope_attention", "no feature map", b25_linear_rope_no_feature_map,
            ("phi", "φ", "elu", "feature map")),
    Heldout("check_linear_rope_attention", "sums over all keys", b25_linear_rope_not_causal,
            ("causal", "future", "j ≤ i", "j <= i", "later keys")),
    Heldout("check_linear_rope_attention", "key i added after its query", b25_linear_rope_excludes_current,
            ("j = i", "diagonal", "current key", "itself", "one key late", "empty")),
    Heldout("check_unrotated_outputs", "rotated forward", b25_unrotate_forward,
            ("sign", "direction", "R_p^T", "transpos", "inverse", "forward")),
    Heldout("check_unrotated_outputs", "positions ignored", b25_unrotate_ignores_positions,
            ("ignores", "positions given", "arange", "default positions", "0, 1, 2")),
    Heldout("check_unrotated_outputs", "half layout", b25_unrotate_half_layout,
            ("layout", "interleav", "half layout", "rotate_half", "l + d/2")),
    Heldout("check_extended_rows", "interpolation onto [0, L)", b25_rows_interpolate_endpoint,
            ("endpoint", "L - 1", "last row", "off by one", "end")),
    Heldout("check_extended_rows", "copy with period L - 1", b25_rows_copy_period_short,
            ("period", "modulo", "mod", "off by one", "L - 1")),
    Heldout("check_extended_rows", "nearest row, not linear interpolation", b25_rows_interpolate_nearest,
            ("linear", "nearest", "round", "blend")),
    Heldout("check_alibi_bias_at_positions", "indices instead of positions", b25_alibi_at_indices,
            ("ignores", "index", "indices", "real positions", "arange")),
    Heldout("check_alibi_bias_at_positions", "minus sign missing", b25_alibi_at_plus,
            ("sign", "minus", "negative", "penalty", "positive")),
    Heldout("check_alibi_bias_at_positions", "float16", b25_alibi_at_float16,
            ("float16", "half precision", "precision")),
    Heldout("check_alibi_bias_at_positions", "squared distance", b25_alibi_at_squared,
            ("absolute", "square", "linear in", "|p_j - p_i|", "quadratic")),
    Heldout("check_ntk_frequencies", "base times s, no exponent", b25_ntk_no_exponent,
            ("d/(d-2)", "d / (d - 2)", "exponent")),
    Heldout("check_ntk_frequencies", "exponent (d-2)/d", b25_ntk_inverted_exponent,
            ("d/(d-2)", "d / (d - 2)", "exponent", "inverted")),
    Heldout("check_ntk_frequencies", "also divided by s", b25_ntk_also_divided,
            ("divided", "interpolat", "pair 0", "fastest pair", "position interpolation")),
    Heldout("check_dynamic_ntk_frequencies", "no floor at the training length", b25_dynamic_no_floor,
            ("short", "max(", "below", "shorter", "never shrink", "training length")),
    Heldout("check_dynamic_ntk_frequencies", "scale without - (s - 1)", b25_dynamic_missing_shift,
            ("s - 1", "factor - 1", "scale formula", "at L", "- (s")),
    Heldout("check_dynamic_ntk_frequencies", "static NTK, length ignored", b25_dynamic_static,
            ("static", "current length", "dynamic", "ignores", "seq_len")),
    Heldout("check_dynamic_ntk_frequencies", "scale n / L, factor ignored", b25_dynamic_ratio_only,
            ("ignores the factor", "ignores", "s_n", "without s", "factor s")),
    Heldout("check_llama3_frequencies", "turns without 2π", b25_by_parts_no_two_pi,
            ("2π", "2 pi", "wavelength", "turns", "radians")),
    Heldout("check_llama3_frequencies", "ramp reversed", b25_by_parts_ramp_reversed,
            ("ramp", "reversed", "direction", "kept", "slow pairs", "fast pairs")),
    Heldout("check_llama3_frequencies", "multiplied by s", b25_by_parts_times_factor,
            ("multipl", "divide", "/ s", "faster", "wrong way")),
    Heldout("check_pi_frequencies", "multiplied by s", b25_pi_times_factor,
            ("multipl", "divide", "wrong way", "faster", "inverse")),
    Heldout("check_pi_frequencies", "base ignored", b25_pi_ignores_base,
            ("ignores", "hard-coded", "hard coded", "10000")),
    Heldout("check_pi_frequencies", "exponent l/d", b25_pi_exponent_index,
            ("exponent", "2l/d", "2ℓ/d", "2l / d", "index")),
    Heldout("check_yarn_frequencies", "ramp linear in the turns (paper)", b25_yarn_ramp_in_turns,
            ("pair index", "index", "linear in", "turns", "paper")),
    Heldout("check_yarn_frequencies", "ramp ends not rounded", b25_yarn_no_rounding,
            ("round", "floor", "ceil", "integer")),
    Heldout("check_yarn_frequencies", "beta_fast and beta_slow swapped", b25_yarn_betas_swapped,
            ("swap", "beta_fast", "β_fast", "exchang", "reversed")),
    Heldout("check_yarn_frequencies", "ramp flipped", b25_yarn_ramp_flipped,
            ("reversed", "flipped", "fast pairs", "kept", "direction")),
]



# Batch 26 (issue 32, fifth pass): written on 2026-11-29 at about 05:50 UTC by a separate session from the
# exercises, their solutions and each checker's signature and first docstring line only, after every change of
# batch 25's pass; measured once at 05:55 UTC. Three entries the writer had seen in an earlier batch (PI times s,
# PI's exponent l/d, NTK's base times s) are left out.


def _b26_theta(dim, base, dtype=torch.float64):
    return base ** (-torch.arange(0, dim, 2, dtype=dtype) / dim)


def _b26_rope(x, positions, base=10000.0):
    """Interleaved RoPE in float64 angles, used to build some of the wrong answers below."""
    dim = x.shape[-1]
    angles = torch.as_tensor(positions).to(torch.float64)[:, None] * _b26_theta(dim, base)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2)


# ----------------------------------------------------------------- alibi_bias_at_positions

def b26_alibi_bias_at_positions_no_minus(slopes, positions):
    distance = (positions[None, :] - positions[:, None]).abs()
    return slopes[:, None, None] * distance


def b26_alibi_bias_at_positions_index_distance(slopes, positions):
    n = positions.shape[0]
    idx = torch.arange(n)
    return -slopes[:, None, None] * (idx[None, :] - idx[:, None]).abs()


def b26_alibi_bias_at_positions_signed(slopes, positions):
    # forgot the absolute value: the causal formula m (p_j - p_i) reused
    return slopes.view(-1, 1, 1) * (positions.view(1, 1, -1) - positions.view(1, -1, 1))


# ----------------------------------------------------------------- alibi_bias_from_slopes

def b26_alibi_from_slopes_i_minus_j(slopes, length):
    i = torch.arange(length)
    return slopes[:, None, None] * (i[:, None] - i[None, :]).float()


def b26_alibi_from_slopes_own_slopes(slopes, length):
    h = slopes.shape[0]
    own = torch.tensor([2.0 ** (-8 * (r + 1) / h) for r in range(h)])
    j = torch.arange(length)
    return own[:, None, None] * (j[None, :] - j[:, None]).float()


# ----------------------------------------------------------------- alibi_slopes

def b26_alibi_slopes_plain_geometric(num_heads):
    # the power-of-two rule used for every head count
    return torch.tensor([2.0 ** (-8.0 * i / num_heads) for i in range(1, num_heads + 1)])


def b26_alibi_slopes_from_zero(num_heads):
    n = 2 ** math.floor(math.log2(num_heads))
    first = [2.0 ** (-8.0 * i / n) for i in range(n)]
    extra = [2.0 ** (-4.0 * i / n) for i in range(1, 2 * n, 2)][: num_heads - n]
    return torch.tensor(first + extra)


def b26_alibi_slopes_no_eight(num_heads):
    n = 2 ** math.floor(math.log2(num_heads))
    first = [2.0 ** (-i / n) for i in range(1, n + 1)]
    extra = [2.0 ** (-0.5 * i / n) for i in range(1, 2 * n, 2)][: num_heads - n]
    return torch.tensor(first + extra)


# ----------------------------------------------------------------- apply_rope (interleaved)

def b26_apply_rope_ignores_base(x, positions=None, base=10000.0):
    if positions is None:
        positions = torch.arange(x.shape[-2])
    return _b26_rope(x, positions, 10000.0)


def b26_apply_rope_half_pairs(x, positions=None, base=10000.0):
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    angles = positions.double()[:, None] * _b26_theta(dim, base)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    a, b = x[..., : dim // 2], x[..., dim // 2:]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), -1)


def b26_apply_rope_exponent_l_over_d(x, positions=None, base=10000.0):
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    theta = base ** (-torch.arange(dim // 2, dtype=torch.float64) / dim)
    angles = positions.double()[:, None] * theta
    z = torch.view_as_complex(x.double().reshape(*x.shape[:-1], dim // 2, 2).contiguous())
    out = torch.view_as_real(z * torch.polar(torch.ones_like(angles), angles))
    return out.flatten(-2).to(x.dtype)


def b26_apply_rope_float32_angles(x, positions=None, base=10000.0):
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    theta = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    angles = positions.float()[:, None] * theta
    cos = angles.cos().repeat_interleave(2, -1).to(x.dtype)
    sin = angles.sin().repeat_interleave(2, -1).to(x.dtype)
    rotated = torch.stack((-x[..., 1::2], x[..., 0::2]), -1).flatten(-2)
    return x * cos + rotated * sin


def b26_apply_rope_default_from_one(x, positions=None, base=10000.0):
    if positions is None:
        positions = torch.arange(1, x.shape[-2] + 1)
    return _b26_rope(x, positions, base)


# ----------------------------------------------------------------- apply_rope_2d

def b26_rope_2d_swapped_axes(x, rows, columns, base=10000.0):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((_b26_rope(first, columns, base), _b26_rope(second, rows, base)), -1)


def b26_rope_2d_interleaved_halves(x, rows, columns, base=10000.0):
    out = torch.empty_like(x)
    dim = x.shape[-1]
    # even quarter-pairs for rows, odd for columns, instead of the two halves
    quads = x.reshape(*x.shape[:-1], dim // 4, 4)
    a = quads[..., :2].flatten(-2)
    b = quads[..., 2:].flatten(-2)
    out_quads = torch.stack((_b26_rope(a, rows, base).unflatten(-1, (dim // 4, 2)),
                             _b26_rope(b, columns, base).unflatten(-1, (dim // 4, 2))), -2)
    out.copy_(out_quads.flatten(-3))
    return out


def b26_rope_2d_default_base(x, rows, columns, base=10000.0):
    half = x.shape[-1] // 2
    return torch.cat((_b26_rope(x[..., :half], rows), _b26_rope(x[..., half:], columns)), -1)


# ----------------------------------------------------------------- attention

def b26_attention_softmax_over_queries(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-2)
    return weights @ v, weights


def b26_attention_divide_by_d(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) / q.shape[-1]
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    weights = scores.softmax(-1)
    return weights @ v, weights


def b26_attention_mask_inverted(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, -1e9)  # True read as "masked out"
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


# ----------------------------------------------------------------- concatenated_sinusoidal

def b26_t2t_exponent_over_half(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / half)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), dim=-1)


def b26_t2t_cos_first(seq_len, dim, base=10000.0):
    half = dim // 2
    log_increment = math.log(base) / (half - 1)
    theta = np.exp(-log_increment * np.arange(half))
    angles = np.arange(seq_len)[:, None] * theta[None, :]
    return torch.from_numpy(np.concatenate([np.cos(angles), np.sin(angles)], axis=1))


def b26_t2t_interleaved(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)


# ----------------------------------------------------------------- cross_attention

def b26_cross_self_attention(y, z, w_q, w_k, w_v):
    # keys and values taken from the decoder states y: self-attention, the memory z unused
    q, k, v = y @ w_q, y @ w_k, y @ w_v
    weights = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=-1)
    return weights @ v


def b26_cross_no_scaling(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T
    return torch.softmax(scores, dim=-1) @ (z @ w_v)


def b26_cross_softmax_axis0(y, z, w_q, w_k, w_v):
    q, k, v = y @ w_q, z @ w_k, z @ w_v
    weights = torch.softmax(q @ k.T / math.sqrt(k.shape[-1]), dim=0)
    return weights @ v


# ----------------------------------------------------------------- decayed_rows

def b26_decayed_rows_no_lr(initial, lr, weight_decay, steps):
    return initial * (1 - weight_decay) ** steps


def b26_decayed_rows_steps_minus_one(initial, lr, weight_decay, steps):
    factor = 1.0
    for _ in range(steps - 1):
        factor *= 1 - lr * weight_decay
    return initial * factor


def b26_decayed_rows_float32(initial, lr, weight_decay, steps):
    keep = torch.tensor(1.0, dtype=torch.float32) - torch.tensor(lr * weight_decay, dtype=torch.float32)
    return initial * keep ** steps


def b26_decayed_rows_linear(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay * steps)


# ----------------------------------------------------------------- decode_positions

def b26_decode_positions_from_zero(cache_len, num_new):
    return torch.arange(num_new)


def b26_decode_positions_one_late(cache_len, num_new):
    return torch.arange(cache_len + 1, cache_len + num_new + 1)


def b26_decode_positions_last_cached(cache_len, num_new):
    start = max(cache_len - 1, 0)
    return torch.arange(start, start + num_new)


# ----------------------------------------------------------------- dynamic_ntk

def b26_dynamic_ntk_no_floor(dim, base, factor, original_max_position, seq_len):
    scale = factor * seq_len / original_max_position - (factor - 1)
    new_base = base * scale ** (dim / (dim - 2))
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b26_dynamic_ntk_no_minus(dim, base, factor, original_max_position, seq_len):
    scale = factor * max(seq_len, original_max_position) / original_max_position
    new_base = base * scale ** (dim / (dim - 2))
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b26_dynamic_ntk_no_exponent(dim, base, factor, original_max_position, seq_len):
    length = max(seq_len, original_max_position)
    scale = factor * length / original_max_position - (factor - 1)
    return 1.0 / (base * scale) ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)


# ----------------------------------------------------------------- expected_score

def b26_expected_score_sin_sign(cross, offsets, base=10000.0):
    theta = _b26_theta(2 * cross.shape[0], base)
    angles = offsets.double()[:, None] * theta
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1])
            + angles.sin() * (cross[:, 0, 1] - cross[:, 1, 0])).sum(-1)


def b26_expected_score_trace_only(cross, offsets, base=10000.0):
    theta = _b26_theta(2 * cross.shape[0], base)
    angles = offsets.double()[:, None] * theta
    return (angles.cos() * cross.diagonal(dim1=-2, dim2=-1).sum(-1)).sum(-1)


def b26_expected_score_dim_is_pairs(cross, offsets, base=10000.0):
    # the dimension taken as the number of blocks, not twice it
    theta = base ** (-2 * torch.arange(len(cross), dtype=torch.float64) / len(cross))
    angles = offsets.double()[:, None] * theta
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1])
            + angles.sin() * (cross[:, 1, 0] - cross[:, 0, 1])).sum(-1)


# ----------------------------------------------------------------- extended_rows

def b26_extended_rows_interp_endpoint(table, length, option):
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1)]
    if option == "copy":
        return table[torch.arange(length) % rows]
    where = torch.arange(length) * rows / length  # scales by L / length, not (L - 1) / (length - 1)
    low = where.floor().long().clamp(max=rows - 2)
    fraction = (where - low)[:, None]
    return (1 - fraction) * table[low] + fraction * table[low + 1]


def b26_extended_rows_copy_period(table, length, option):
    rows = table.shape[0]
    if option == "clip":
        return table[[min(t, rows - 1) for t in range(length)]]
    if option == "copy":
        return table[[t % (rows - 1) for t in range(length)]]
    where = torch.linspace(0, rows - 1, length)
    low = where.floor().long().clamp(max=rows - 2)
    fraction = (where - low)[:, None]
    return (1 - fraction) * table[low] + fraction * table[low + 1]


def b26_extended_rows_interp_nearest(table, length, option):
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1)]
    if option == "copy":
        return table[torch.arange(length) % rows]
    return table[torch.linspace(0, rows - 1, length).round().long()]


# ----------------------------------------------------------------- linear_rope_attention

def b26_linear_rope_rotated_normaliser(q, k, v, base=10000.0):
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    positions = torch.arange(q.shape[0])
    rot_q, rot_k = _b26_rope(phi_q, positions, base), _b26_rope(phi_k, positions, base)
    numerator = torch.tril(rot_q @ rot_k.T) @ v
    denominator = torch.tril(rot_q @ rot_k.T).sum(-1, keepdim=True)
    return numerator / denominator


def b26_linear_rope_not_causal(q, k, v, base=10000.0):
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    positions = torch.arange(q.shape[0])
    rot_q, rot_k = _b26_rope(phi_q, positions, base), _b26_rope(phi_k, positions, base)
    state = rot_k.T @ v
    normaliser = phi_k.sum(0)
    return (rot_q @ state) / (phi_q @ normaliser)[:, None]


def b26_linear_rope_rotate_before_phi(q, k, v, base=10000.0):
    positions = torch.arange(q.shape[0])
    rq, rk = _b26_rope(q, positions, base), _b26_rope(k, positions, base)
    phi_rq, phi_rk = F.elu(rq) + 1, F.elu(rk) + 1
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    out = []
    for i in range(q.shape[0]):
        num = (phi_rq[i] @ phi_rk[: i + 1].T) @ v[: i + 1]
        den = phi_q[i] @ phi_k[: i + 1].sum(0)
        out.append(num / den)
    return torch.stack(out)


# ----------------------------------------------------------------- llama3 (by parts)

def b26_llama3_ramp_reversed(dim, base, factor, original_max_position, low, high):
    theta = _b26_theta(dim, base)
    turns = original_max_position * theta / (2 * math.pi)
    kept = ((turns - low) / (high - low)).clamp(0, 1)
    return kept * theta / factor + (1 - kept) * theta


def b26_llama3_no_two_pi(dim, base, factor, original_max_position, low, high):
    theta = _b26_theta(dim, base)
    turns = original_max_position * theta  # radians, not turns
    kept = ((turns - low) / (high - low)).clamp(0, 1)
    return (1 - kept) * theta / factor + kept * theta


def b26_llama3_times_factor(dim, base, factor, original_max_position, low, high):
    theta = _b26_theta(dim, base)
    wavelength = 2 * math.pi / theta
    ratio = original_max_position / wavelength
    smooth = torch.clamp((ratio - low) / (high - low), 0.0, 1.0)
    return (1 - smooth) * theta * factor + smooth * theta


# ----------------------------------------------------------------- ntk


def b26_ntk_inverted_exponent(dim, base, factor):
    new_base = base * factor ** ((dim - 2) / dim)
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b26_ntk_divides_all(dim, base, factor):
    return _b26_theta(dim, base) / factor


# ----------------------------------------------------------------- padded_positions

def b26_padded_cumsum_unmasked(input_ids, padding_idx=1):
    return torch.cumsum((input_ids != padding_idx).long(), dim=-1) + padding_idx


def b26_padded_hardcoded_one(input_ids, padding_idx=1):
    is_token = (input_ids != 1).long()
    return torch.cumsum(is_token, dim=-1) * is_token + 1


def b26_padded_start_at_padding_idx(input_ids, padding_idx=1):
    is_token = input_ids.ne(padding_idx).int()
    return ((is_token.cumsum(-1) - 1) * is_token + padding_idx).long()


def b26_padded_cumsum_batch_axis(input_ids, padding_idx=1):
    is_token = (input_ids != padding_idx).long()
    return torch.cumsum(is_token, dim=0) * is_token + padding_idx


# ----------------------------------------------------------------- pi



def b26_pi_ignores_base(dim, base, factor):
    return 10000.0 ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim) / factor


# ----------------------------------------------------------------- position_parameter_counts

def b26_counts_one_projection(positions, width):
    return positions * width, positions * width, positions * width


def b26_counts_with_bias(positions, width):
    return positions * width, positions * width + width, 3 * positions * width


def b26_counts_reversed(positions, width):
    return 3 * positions * width, positions * width, positions * width


# ----------------------------------------------------------------- position_recovery

def b26_recovery_in_input_dtype(outputs):
    # no conversion to float64: 1/o - 1 is computed in the outputs' own (low) precision
    return torch.round(outputs.reciprocal() - 1)


def b26_recovery_no_minus_one(outputs):
    return (1.0 / outputs.double()).round()


def b26_recovery_truncates(outputs):
    return (1.0 / outputs.double() - 1.0).long()


# ----------------------------------------------------------------- positional_head_query

def b26_head_query_minus_target(key, target, base=10000.0):
    return _b26_rope(key[None], torch.tensor([-target]), base)[0]


def b26_head_query_key_itself(key, target, base=10000.0):
    return key.clone()


def b26_head_query_default_base(key, target, base=10000.0):
    return _b26_rope(key[None], torch.tensor([target]))[0]


# ----------------------------------------------------------------- relative_shift

def b26_rel_shift_pad_right(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = F.pad(rel_logits, (0, 1))
    rows = padded.reshape(*batch, k_len + 1, q_len)[..., 1:, :]
    return rows.reshape(*batch, q_len, k_len)


def b26_rel_shift_drop_last(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = F.pad(rel_logits, (1, 0))
    rows = padded.reshape(*batch, k_len + 1, q_len)[..., :-1, :]
    return rows.reshape(*batch, q_len, k_len)


def b26_rel_shift_wrong_direction(rel_logits):
    q_len, k_len = rel_logits.shape[-2:]
    out = torch.zeros_like(rel_logits)
    for r in range(q_len):
        shift = r  # should be q_len - 1 - r
        out[..., r, : k_len - shift] = rel_logits[..., r, shift:]
    return out


# ----------------------------------------------------------------- repeat_kv

def b26_repeat_kv_tiled(kv, num_heads):
    group = num_heads // kv.shape[-3]
    reps = [1] * kv.dim()
    reps[-3] = group
    return kv.repeat(*reps)


def b26_repeat_kv_sequence_axis(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=-2).reshape(
        *kv.shape[:-3], num_heads, kv.shape[-2], kv.shape[-1])


def b26_repeat_kv_group_two(kv, num_heads):
    return torch.repeat_interleave(kv, 2, dim=-3)


# ----------------------------------------------------------------- reversal_gap

def b26_reversal_gap_output_not_reversed(layer, x):
    return (layer(x.flip(-2)) - layer(x)).abs().max().item()


def b26_reversal_gap_feature_axis(layer, x):
    return (layer(x.flip(-1)) - layer(x).flip(-1)).abs().max().item()


def b26_reversal_gap_mean(layer, x):
    return (layer(x.flip(0)) - layer(x).flip(0)).abs().mean().item()


# ----------------------------------------------------------------- rope_matrix_2d_blocks

def _b26_blocks(angles, transpose=False):
    blocks = []
    for a in angles:
        c, s = math.cos(a), math.sin(a)
        blocks.append(torch.tensor([[c, s], [-s, c]] if transpose else [[c, -s], [s, c]], dtype=torch.float64))
    return torch.block_diag(*blocks)


def b26_rope_blocks_axial_frequencies(row, column, dim, base=10000.0):
    theta = base ** (-2 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    angles = torch.stack((row * theta, column * theta), -1).flatten().tolist()
    return _b26_blocks(angles)


def b26_rope_blocks_transposed(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    angles = torch.stack((row * theta, column * theta), -1).flatten().tolist()
    return _b26_blocks(angles, transpose=True)


def b26_rope_blocks_swapped(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    angles = torch.stack((column * theta, row * theta), -1).flatten().tolist()
    return _b26_blocks(angles)


# ----------------------------------------------------------------- score_asymmetry

def _b26_score(query, key, offsets, base, sign):
    d = query.shape[-1]
    angles = sign * offsets.double()[:, None] * _b26_theta(d, base)
    qc = torch.complex(query[0::2].double(), query[1::2].double())
    kc = torch.complex(key[0::2].double(), key[1::2].double())
    return (qc.conj() * kc * torch.exp(1j * angles)).sum(-1).real


def b26_score_asymmetry_sum(query, key, offsets, base=10000.0):
    return _b26_score(query, key, offsets, base, 1) + _b26_score(query, key, offsets, base, -1)


def b26_score_asymmetry_reversed(query, key, offsets, base=10000.0):
    return _b26_score(query, key, offsets, base, -1) - _b26_score(query, key, offsets, base, 1)


def b26_score_asymmetry_float32(query, key, offsets, base=10000.0):
    d = query.shape[-1]
    theta = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    angles = offsets.float()[:, None] * theta
    qc = torch.complex(query[0::2].float(), query[1::2].float())
    kc = torch.complex(key[0::2].float(), key[1::2].float())
    eta = qc.conj() * kc
    return ((eta * torch.exp(1j * angles)).sum(-1).real - (eta * torch.exp(-1j * angles)).sum(-1).real).double()


# ----------------------------------------------------------------- shaw_index

def b26_shaw_ignores_offset(q_len, k_len, max_distance, query_offset=0):
    offsets = torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
    return offsets.clamp(-max_distance, max_distance) + max_distance


def b26_shaw_no_shift(q_len, k_len, max_distance, query_offset=0):
    queries = query_offset + torch.arange(q_len)
    offsets = torch.arange(k_len)[None, :] - queries[:, None]
    return torch.clamp(offsets, min=-max_distance, max=max_distance)  # the + c to make a row index forgotten


def b26_shaw_i_minus_j(q_len, k_len, max_distance, query_offset=0):
    rows = []
    for i in range(q_len):
        rows.append([max(-max_distance, min(max_distance, (i + query_offset) - j)) + max_distance
                     for j in range(k_len)])
    return torch.tensor(rows)


# ----------------------------------------------------------------- sinusoidal

def b26_sinusoidal_cos_even(seq_len, dim, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    angle = pos / base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return torch.stack((angle.cos(), angle.sin()), -1).flatten(-2).float()


def b26_sinusoidal_exponent_l(seq_len, dim, base=10000.0):
    pos = np.arange(seq_len)[:, None]
    angle = pos / np.power(base, np.arange(dim // 2) / dim)
    out = np.zeros((seq_len, dim))
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return torch.tensor(out, dtype=torch.float32)


def b26_sinusoidal_from_one(seq_len, dim, base=10000.0):
    pos = torch.arange(1, seq_len + 1, dtype=torch.float64)[:, None]
    angle = pos * base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    enc = torch.zeros(seq_len, dim, dtype=torch.float64)
    enc[:, 0::2], enc[:, 1::2] = angle.sin(), angle.cos()
    return enc.float()


def b26_sinusoidal_float16(seq_len, dim, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float16)[:, None]
    theta = (base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)).half()
    angle = pos * theta
    return torch.stack((angle.float().sin(), angle.float().cos()), -1).flatten(-2)


# ----------------------------------------------------------------- slowest_wavelength

def b26_slowest_wavelength_full_base(dim, base):
    return 2 * math.pi * base


def b26_slowest_wavelength_no_two_pi(dim, base):
    return base ** (1 - 2 / dim)


def b26_slowest_wavelength_frequency(dim, base):
    return 2 * math.pi / base ** (1 - 2 / dim)


# ----------------------------------------------------------------- streaming_cache

def b26_streaming_forward_rotation(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    moved = _b26_rope(cached[..., total - window:, :], torch.full((window,), shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b26_streaming_shift_off_by_one(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks + 1
    moved = _b26_rope(cached[..., total - window:, :], torch.full((window,), -shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b26_streaming_four_sinks(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - 4
    moved = _b26_rope(cached[..., total - window:, :], torch.full((window,), -shift))
    return torch.cat((cached[..., :4, :], moved), dim=-2)


def b26_streaming_no_sinks(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window
    return _b26_rope(cached[..., total - window:, :], torch.full((window,), -shift))


# ----------------------------------------------------------------- t5_bucket

def b26_t5_side_swapped(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    offsets = torch.as_tensor(relative_position).long()
    n_b = num_buckets // 2 if bidirectional else num_buckets
    first = torch.where(offsets < 0, n_b, 0) if bidirectional else 0
    rho = offsets.abs() if bidirectional else (-offsets).clamp(min=0)
    e = n_b // 2
    log_part = torch.log(rho.clamp(min=1).float() / e) / math.log(max_distance / e) * (n_b - e)
    far = (e + log_part.long()).clamp(max=n_b - 1)
    return first + torch.where(rho < e, rho, far)


def b26_t5_unidirectional_future(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    offsets = torch.as_tensor(relative_position).long()
    n_b = num_buckets // 2 if bidirectional else num_buckets
    first = torch.where(offsets > 0, n_b, 0) if bidirectional else 0
    rho = offsets.abs() if bidirectional else offsets.clamp(min=0)
    e = n_b // 2
    log_part = torch.log(rho.clamp(min=1).float() / e) / math.log(max_distance / e) * (n_b - e)
    far = (e + log_part.long()).clamp(max=n_b - 1)
    return first + torch.where(rho < e, rho, far)


def b26_t5_log_denominator(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    offsets = torch.as_tensor(relative_position).long()
    n_b = num_buckets // 2 if bidirectional else num_buckets
    first = torch.where(offsets > 0, n_b, 0) if bidirectional else 0
    rho = offsets.abs() if bidirectional else (-offsets).clamp(min=0)
    e = n_b // 2
    log_part = torch.log(rho.clamp(min=1).float() / e) / math.log(max_distance) * (n_b - e)
    far = (e + log_part.long()).clamp(max=n_b - 1)
    return first + torch.where(rho < e, rho, far)


def b26_t5_no_clamp(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    offsets = torch.as_tensor(relative_position).long()
    n_b = num_buckets // 2 if bidirectional else num_buckets
    first = torch.where(offsets > 0, n_b, 0) if bidirectional else 0
    rho = offsets.abs() if bidirectional else (-offsets).clamp(min=0)
    e = n_b // 2
    log_part = torch.log(rho.clamp(min=1).float() / e) / math.log(max_distance / e) * (n_b - e)
    far = e + log_part.long()
    return first + torch.where(rho < e, rho, far)


# ----------------------------------------------------------------- unrotated_outputs

def b26_unrotate_forward(outputs, positions, base=10000.0):
    return _b26_rope(outputs, positions, base)


def b26_unrotate_default_positions(outputs, positions, base=10000.0):
    return _b26_rope(outputs, -torch.arange(outputs.shape[-2]), base)


def b26_unrotate_half_layout(outputs, positions, base=10000.0):
    dim = outputs.shape[-1]
    angles = -positions.double()[:, None] * _b26_theta(dim, base)
    cos, sin = angles.cos().to(outputs.dtype), angles.sin().to(outputs.dtype)
    a, b = outputs[..., : dim // 2], outputs[..., dim // 2:]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), -1)


# ----------------------------------------------------------------- yarn

def _b26_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, rounding=True, reverse=False):
    theta_all = _b26_theta(dim, base)

    def pair_at(turns):
        return dim * math.log(original_max_position / (2 * math.pi * turns)) / (2 * math.log(base))

    low, high = pair_at(beta_fast), pair_at(beta_slow)
    if rounding:
        low, high = max(math.floor(low), 0), min(math.ceil(high), dim - 1)
    else:
        low, high = max(low, 0), min(high, dim - 1)
    high += 0.001 if low == high else 0
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    if reverse:
        ramp = 1 - ramp
    return theta_all * (1 - ramp) + theta_all / factor * ramp


def b26_yarn_betas_swapped(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b26_yarn(dim, base, factor, original_max_position, beta_slow, beta_fast)


def b26_yarn_ramp_reversed(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b26_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, reverse=True)


def b26_yarn_no_rounding(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b26_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, rounding=False)


SIGN = ("sign", "negative", "positive", "penalt", "minus")
FLOAT32 = ("float32", "float64", "precision", "double", "rounding")
IGNORES_BASE = ("ignores base", "ignores the base", "ignor", "hard-coded", "hardcoded", "default base", "not passed")

HELDOUT_BATCH_26 = [
    # ALiBi at real positions
    Heldout("check_alibi_bias_at_positions", "bias without the minus sign (a reward for distance)",
            b26_alibi_bias_at_positions_no_minus, SIGN),
    Heldout("check_alibi_bias_at_positions", "distance of indices, the positions ignored",
            b26_alibi_bias_at_positions_index_distance,
            ("ignor", "arange", "index distance", "indices instead",
             "evenly spaced", "gaps")),
    Heldout("check_alibi_bias_at_positions", "signed distance m (p_j - p_i), no absolute value",
            b26_alibi_bias_at_positions_signed, ("abs", "absolute", "symmetric", "|p_j", "sign")),
    # ALiBi from slopes
    Heldout("check_alibi_bias_from_slopes", "m (i - j) instead of m (j - i)",
            b26_alibi_from_slopes_i_minus_j, ("sign", "i - j", "revers", "transpos", "positive")),
    Heldout("check_alibi_bias_from_slopes", "slopes recomputed from the head count, the given ones ignored",
            b26_alibi_from_slopes_own_slopes, ("ignor", "recomput", "own slopes", "geometric", "2^(-8")),
    # ALiBi slopes
    Heldout("check_alibi_slopes", "power-of-two rule for every head count",
            b26_alibi_slopes_plain_geometric, ("power of two", "power of 2", "non-power", "interleav",
                                               "closest power", "2^⌊")),
    Heldout("check_alibi_slopes", "exponent index starting at 0 (first slope 1)",
            b26_alibi_slopes_from_zero,
            ("off by one", "off-by-one", "first slope", "i = 1",
             "shifted", "slope 1", "equal to 1")),
    Heldout("check_alibi_slopes", "2^(-i/n) without the 8",
            b26_alibi_slopes_no_eight, ("exponent", "factor 8", "missing 8", "-8", "2^(-8", "too large", "too slow")),
    # RoPE, interleaved
    Heldout("check_apply_rope", "base argument ignored", b26_apply_rope_ignores_base, IGNORES_BASE),
    Heldout("check_apply_rope", "pairs (l, l + d/2) instead of adjacent pairs", b26_apply_rope_half_pairs,
            ("layout", "half", "interleav", "pairing", "adjacent", "rotate_half")),
    Heldout("check_apply_rope", "theta_l = b^(-l/d) instead of b^(-2l/d) (complex numbers)",
            b26_apply_rope_exponent_l_over_d, ("exponent", "frequenc", "2l/d", "too slow")),
    Heldout("check_apply_rope", "angles computed in float32", b26_apply_rope_float32_angles, FLOAT32),
    Heldout("check_apply_rope", "default positions start at 1", b26_apply_rope_default_from_one,
            ("off by one", "off-by-one", "start at 0", "default positions", "position 0", "shifted", "from 1")),
    # 2-D RoPE
    Heldout("check_apply_rope_2d", "rows and columns swapped", b26_rope_2d_swapped_axes,
            ("swap", "exchanged", "transpos", "rows and columns", "columns for the first")),
    Heldout("check_apply_rope_2d", "blocks of four instead of two halves", b26_rope_2d_interleaved_halves,
            ("half", "halves", "split", "chunk", "interleav", "layout", "blocks of four")),
    Heldout("check_apply_rope_2d", "base not passed on to the inner rotation", b26_rope_2d_default_base,
            IGNORES_BASE),
    # attention
    Heldout("check_attention", "softmax over the queries", b26_attention_softmax_over_queries,
            ("axis", "dim=-2", "sum to 1", "sum to one", "over the queries", "columns")),
    Heldout("check_attention", "scores divided by d, not sqrt(d) (einsum)", b26_attention_divide_by_d,
            ("scale", "sqrt", "√d", "temperature", "scaling")),
    Heldout("check_attention", "mask read the wrong way round", b26_attention_mask_inverted,
            ("invert", "opposite", "wrong way", "~mask", "true means", "keeps the masked")),
    # concatenated sinusoidal
    Heldout("check_concatenated_sinusoidal", "exponent l/(d/2) instead of l/(d/2 - 1)", b26_t2t_exponent_over_half,
            ("d/2 - 1", "half - 1", "exponent", "denominator", "slowest")),
    Heldout("check_concatenated_sinusoidal", "cosines first, then sines (numpy)", b26_t2t_cos_first,
            ("order", "swap", "cosines first", "cos first", "sines first", "exchanged")),
    Heldout("check_concatenated_sinusoidal", "sines and cosines interleaved, not concatenated",
            b26_t2t_interleaved, ("interleav", "concaten", "layout", "alternat", "adjacent")),
    # cross-attention
    Heldout("check_cross_attention", "self-attention over y, the memory ignored", b26_cross_self_attention,
            ("memory", "ignor", "self-attention", "keys and values", "from z")),
    Heldout("check_cross_attention", "no 1/sqrt(d) scaling", b26_cross_no_scaling,
            ("scale", "sqrt", "√d", "temperature", "scaling")),
    Heldout("check_cross_attention", "softmax over the queries", b26_cross_softmax_axis0,
            ("axis", "dim=0", "sum to 1", "sum to one", "over the queries", "normalis")),
    # decayed rows
    Heldout("check_decayed_rows", "decay (1 - wd)^t without the learning rate", b26_decayed_rows_no_lr,
            ("learning rate", "lr·wd", "lr * wd", "lr × wd", "missing factor", "without lr", "ignores lr")),
    Heldout("check_decayed_rows", "one step too few (loop)", b26_decayed_rows_steps_minus_one,
            ("off by one", "off-by-one", "one step", "steps - 1", "too few")),
    Heldout("check_decayed_rows", "decay factor in float32", b26_decayed_rows_float32, FLOAT32),
    Heldout("check_decayed_rows", "linear decay 1 - lr wd t", b26_decayed_rows_linear,
            ("linear", "compound", "geometric", "not linear", "power")),
    # decode positions
    Heldout("check_decode_positions", "positions from 0, the cache ignored", b26_decode_positions_from_zero,
            ("ignor", "from 0", "at 0", "restart", "starts at zero", "position 0")),
    Heldout("check_decode_positions", "one position late", b26_decode_positions_one_late,
            ("off by one", "off-by-one", "one late", "cache_len + 1", "too late")),
    Heldout("check_decode_positions", "one position early", b26_decode_positions_last_cached,
            ("off by one", "off-by-one", "one early", "cache_len - 1", "too early", "last cached")),
    # dynamic NTK
    Heldout("check_dynamic_ntk_frequencies", "no max with the original length (scale below 1)",
            b26_dynamic_ntk_no_floor, ("short", "below 1", "shorter", "clamp", "< 1", "less than 1", "never below")),
    Heldout("check_dynamic_ntk_frequencies", "scale s n / L without - (s - 1)", b26_dynamic_ntk_no_minus,
            ("s - 1", "factor - 1", "minus", "scale formula", "- (s")),
    Heldout("check_dynamic_ntk_frequencies", "base multiplied by the scale, no d/(d-2)",
            b26_dynamic_ntk_no_exponent, ("d/(d-2)", "d / (d - 2)", "d/(d − 2)", "exponent", "slowest")),
    # expected score
    Heldout("check_expected_score", "sine term with C_01 - C_10", b26_expected_score_sin_sign,
            ("sign", "transpos", "antisymmetric", "C_10", "C[1, 0]", "off-diagonal")),
    Heldout("check_expected_score", "trace only, sine term dropped", b26_expected_score_trace_only,
            ("sine term", "sin term", "off-diagonal", "antisymmetric", "missing", "trace only", "c_01")),
    Heldout("check_expected_score", "dimension taken as the number of blocks", b26_expected_score_dim_is_pairs,
            ("head dimension", "d/2", "number of pairs", "twice", "2 len", "number of blocks")),
    # extended rows
    Heldout("check_extended_rows", "interpolation scaled by L/length (misses the last row)",
            b26_extended_rows_interp_endpoint, ("endpoint", "last row", "L - 1", "off by one", "linspace")),
    Heldout("check_extended_rows", "copy with period L - 1", b26_extended_rows_copy_period,
            ("period", "modulo", "L - 1", "off by one", "wrap")),
    Heldout("check_extended_rows", "interpolation by nearest row", b26_extended_rows_interp_nearest,
            ("nearest", "round", "linear", "blend", "weighted")),
    # linear attention with RoPE
    Heldout("check_linear_rope_attention", "rotated features in the normaliser (tril matrices)",
            b26_linear_rope_rotated_normaliser, ("normalis", "denominator", "unrotated", "rotated")),
    Heldout("check_linear_rope_attention", "sums over all keys, not causal", b26_linear_rope_not_causal,
            ("causal", "future", "j <= i", "j ≤ i", "all keys", "later keys")),
    Heldout("check_linear_rope_attention", "RoPE applied before the feature map", b26_linear_rope_rotate_before_phi,
            ("before", "after", "order", "feature map", "phi", "φ")),
    # llama3 / by parts
    Heldout("check_llama3_frequencies", "ramp reversed: slow pairs kept, fast pairs divided",
            b26_llama3_ramp_reversed, ("revers", "backwards", "swap", "fast pairs", "high-frequency", "wrong end")),
    Heldout("check_llama3_frequencies", "turns counted in radians (no 2π)", b26_llama3_no_two_pi,
            ("2π", "2 pi", "2*pi", "2 * pi", "radians", "wavelength")),
    Heldout("check_llama3_frequencies", "slow pairs multiplied by s", b26_llama3_times_factor,
            ("multipl", "divide", "faster", "θ/s", "theta / s", "times s")),
    # NTK
    Heldout("check_ntk_frequencies", "exponent (d-2)/d, inverted", b26_ntk_inverted_exponent,
            ("exponent", "invert", "(d-2)/d", "(d - 2)/d", "d/(d-2)", "d / (d - 2)")),
    Heldout("check_ntk_frequencies", "every frequency divided by s (that is PI)", b26_ntk_divides_all,
            ("position interpolation", "every pair", "pair 0", "fast pair", "uniform", "all pairs")),
    # padded positions
    Heldout("check_padded_positions", "cumulative sum not masked: padding numbered too", b26_padded_cumsum_unmasked,
            ("padding", "pad token", "not masked", "unmasked", "padded")),
    Heldout("check_padded_positions", "padding id hard-coded to 1", b26_padded_hardcoded_one,
            ("ignor", "hard-coded", "hardcoded", "pad id", "padding id")),
    Heldout("check_padded_positions", "first real token at padding_idx, not padding_idx + 1",
            b26_padded_start_at_padding_idx,
            ("off by one", "off-by-one", "padding_idx + 1",
             "first real", "one too small")),
    Heldout("check_padded_positions", "cumulative sum over the batch axis", b26_padded_cumsum_batch_axis,
            ("axis", "dim=0", "batch", "along the sequence", "across")),
    # PI
    Heldout("check_pi_frequencies", "base ignored", b26_pi_ignores_base, IGNORES_BASE),
    # parameter counts
    Heldout("check_position_parameter_counts", "part 3 counts one projection, not three",
            b26_counts_one_projection, ("three", "q, k and v", "each projection", "projections", "3nd")),
    Heldout("check_position_parameter_counts", "part 2 adds a bias", b26_counts_with_bias, ("bias",)),
    Heldout("check_position_parameter_counts", "counts in the wrong order", b26_counts_reversed,
            ("order", "swap", "revers", "wrong order")),
    # position recovery
    Heldout("check_position_recovery", "1/o - 1 computed in the outputs' dtype, not float64",
            b26_recovery_in_input_dtype, FLOAT32 + ("float16", "bfloat16", "dtype")),
    Heldout("check_position_recovery", "1/o without the - 1", b26_recovery_no_minus_one,
            ("off by one", "off-by-one", "- 1", "minus one", "shifted", "one too")),
    Heldout("check_position_recovery", "truncated instead of rounded", b26_recovery_truncates,
            ("round", "truncat", "floor", "nearest")),
    # positional head query
    Heldout("check_positional_head_query", "key rotated by -target", b26_head_query_minus_target,
            ("sign", "-target", "mirror", "opposite", "negative")),
    Heldout("check_positional_head_query", "the key itself, not rotated", b26_head_query_key_itself,
            ("ignor", "not rotated", "unrotated", "peaks at 0", "δ = 0", "the key itself")),
    Heldout("check_positional_head_query", "base not passed on", b26_head_query_default_base, IGNORES_BASE),
    # relative shift
    Heldout("check_relative_shift", "pad on the right", b26_rel_shift_pad_right,
            ("right", "left", "wrong side", "pad on the left", "padded on the right")),
    Heldout("check_relative_shift", "last row dropped instead of the first", b26_rel_shift_drop_last,
            ("first row", "last row", "drop", "discard", "wrong row")),
    Heldout("check_relative_shift", "row r shifted by r (loop)", b26_rel_shift_wrong_direction,
            ("direction", "revers", "Lq - 1 - r", "wrong way", "flip", "mirror")),
    # repeat_kv
    Heldout("check_repeat_kv", "heads tiled with repeat, not grouped", b26_repeat_kv_tiled,
            ("interleave", "group", "tile", "order", "consecutive", "repeat_interleave")),
    Heldout("check_repeat_kv", "repeated along the sequence axis, then reshaped", b26_repeat_kv_sequence_axis,
            ("axis", "dim=-2", "head axis", "sequence axis", "along the sequence")),
    Heldout("check_repeat_kv", "group size hard-coded to 2", b26_repeat_kv_group_two,
            ("ignor", "hard-coded", "hardcoded", "group size", "groups of 2")),
    # reversal gap
    Heldout("check_reversal_gap", "output not reversed back", b26_reversal_gap_output_not_reversed,
            ("output not reversed", "not reversed back", "un-reversed", "reverse the output",
             "flip the output", "reversed output", "outputs back")),
    Heldout("check_reversal_gap", "features reversed instead of positions", b26_reversal_gap_feature_axis,
            ("axis", "feature", "last axis", "sequence axis", "dim=-1")),
    Heldout("check_reversal_gap", "mean instead of max", b26_reversal_gap_mean,
            ("mean", "average", "not the largest", "largest")),
    # 2-D RoPE matrix in blocks
    Heldout("check_rope_matrix_2d_blocks", "axial frequencies b^(-2l/d), not b^(-4l/d)",
            b26_rope_blocks_axial_frequencies, ("exponent", "4l", "d/4", "theta'", "θ'", "axial frequenc")),
    Heldout("check_rope_matrix_2d_blocks", "each 2 x 2 block transposed", b26_rope_blocks_transposed,
            ("transpos", "sign", "R^T", "clockwise", "inverse", "sin")),
    Heldout("check_rope_matrix_2d_blocks", "row and column swapped", b26_rope_blocks_swapped,
            ("swap", "exchanged", "row and column", "column first")),
    # score asymmetry
    Heldout("check_score_asymmetry", "s(δ) + s(-δ)", b26_score_asymmetry_sum,
            ("sum", "plus", "symmetric", "difference", "even")),
    Heldout("check_score_asymmetry", "s(-δ) - s(δ)", b26_score_asymmetry_reversed,
            ("sign", "revers", "s(-δ) - s(δ)", "conjugat", "opposite")),
    Heldout("check_score_asymmetry", "complex64 / float32 angles", b26_score_asymmetry_float32,
            FLOAT32 + ("complex64",)),
    # Shaw index
    Heldout("check_shaw_index", "query_offset ignored", b26_shaw_ignores_offset,
            ("ignor", "query offset", "cached queries", "offset ignored")),
    Heldout("check_shaw_index", "clipped offsets returned without the + c shift", b26_shaw_no_shift,
            ("negative", "+ c", "+ max_distance", "shift", "row index", "0 to 2c")),
    Heldout("check_shaw_index", "i - j instead of j - i (loops)", b26_shaw_i_minus_j,
            ("sign", "i - j", "revers", "transpos", "mirror")),
    # sinusoidal
    Heldout("check_sinusoidal", "cosines in the even columns", b26_sinusoidal_cos_even,
            ("swap", "cos first", "cosines first", "order", "exchanged", "even columns")),
    Heldout("check_sinusoidal", "exponent l/d instead of 2l/d (numpy)", b26_sinusoidal_exponent_l,
            ("exponent", "2l/d", "2i/d", "frequenc", "too slow")),
    Heldout("check_sinusoidal", "positions start at 1", b26_sinusoidal_from_one,
            ("off by one", "off-by-one", "position 0", "starts at 1", "from 1", "shifted")),
    Heldout("check_sinusoidal", "angles in float16", b26_sinusoidal_float16,
            ("float16", "half", "precision", "float32", "rounding")),
    # slowest wavelength
    Heldout("check_slowest_wavelength", "2π b, the exponent dropped", b26_slowest_wavelength_full_base,
            ("exponent", "1 - 2/d", "slowest pair", "last pair", "l = d/2 - 1")),
    Heldout("check_slowest_wavelength", "no 2π", b26_slowest_wavelength_no_two_pi,
            ("2π", "2 pi", "2*pi", "2 * pi", "radians", "period")),
    Heldout("check_slowest_wavelength", "the frequency, not the wavelength", b26_slowest_wavelength_frequency,
            ("frequency", "invert", "reciprocal", "1/", "not the wavelength")),
    # streaming cache
    Heldout("check_streaming_cache", "window keys rotated forward by the shift", b26_streaming_forward_rotation,
            ("sign", "direction", "forward", "backward", "-shift", "opposite")),
    Heldout("check_streaming_cache", "shift one too large", b26_streaming_shift_off_by_one,
            ("off by one", "off-by-one", "by one", "one too")),
    Heldout("check_streaming_cache", "sinks hard-coded to 4", b26_streaming_four_sinks,
            ("ignor", "hard-coded", "hardcoded", "four sinks", "4 sinks")),
    Heldout("check_streaming_cache", "sinks dropped", b26_streaming_no_sinks,
            ("attention sink", "sinks dropped", "sinks missing", "sinks not kept",
             "keep the sinks", "first keys", "first tokens")),
    # T5 buckets
    Heldout("check_t5_bucket", "past keys put in the upper half", b26_t5_side_swapped,
            ("sign", "side", "future", "past", "upper half", "direction")),
    Heldout("check_t5_bucket", "unidirectional buckets count the future", b26_t5_unidirectional_future,
            ("unidirectional", "bidirectional=false", "causal", "future", "past", "sign")),
    Heldout("check_t5_bucket", "log divided by log(max_distance), not log(max_distance / max_exact)",
            b26_t5_log_denominator, ("log", "max_exact", "max_distance /", "denominator", "logarithm")),
    Heldout("check_t5_bucket", "far buckets not clamped at the last bucket", b26_t5_no_clamp,
            ("clamp", "overflow", "last bucket", "beyond max_distance", "num_buckets - 1", "out of range")),
    # unrotated outputs
    Heldout("check_unrotated_outputs", "rotated forward by R_p, not back", b26_unrotate_forward,
            ("sign", "direction", "R_p^T", "transpos", "inverse", "forward", "twice")),
    Heldout("check_unrotated_outputs", "positions ignored, 0..L-1 used", b26_unrotate_default_positions,
            ("ignor", "arange", "default positions", "0..l-1", "0 … l-1")),
    Heldout("check_unrotated_outputs", "half layout instead of interleaved", b26_unrotate_half_layout,
            ("interleav", "layout", "half", "pairing", "adjacent")),
    # YaRN
    Heldout("check_yarn_frequencies", "beta_fast and beta_slow swapped", b26_yarn_betas_swapped,
            ("swap", "exchanged", "revers", "beta_fast and beta_slow")),
    Heldout("check_yarn_frequencies", "ramp reversed: fast pairs interpolated", b26_yarn_ramp_reversed,
            ("revers", "backwards", "fast pairs", "high-frequency", "wrong end", "slow pairs")),
    Heldout("check_yarn_frequencies", "ramp ends not rounded (no floor/ceil)", b26_yarn_no_rounding,
            ("floor", "ceil", "round", "integer")),
]



# Batch 27 (issue 32, sixth pass): written on 2026-11-29 at 07:09-07:18 UTC by a separate session from the exercises,
# their solutions and each checker's signature and first docstring line only (it glimpsed the helper names of this
# file and the start of one checker's docstring; see the module docstring), after every change of the sixth pass and
# while an audit of wrong causes was being made without it; measured once at 07:33 UTC.

def _b27_theta(dim, base, dtype=torch.float64):
    return base ** (-torch.arange(0, dim, 2, dtype=dtype) / dim)


# ---------------------------------------------------------------- check_attention
def b27_attention_zero_fill(q, k, v, mask=None):
    # masks by setting hidden scores to 0 instead of -inf: hidden keys keep weight
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    weights = scores.softmax(-1)
    return weights @ v, weights


def b27_attention_mask_true_hides(q, k, v, mask=None):
    # nn.MultiheadAttention's convention (True = do not attend) in a function whose True means "keep"
    scores = torch.einsum("...qd,...kd->...qk", q, k) / q.shape[-1] ** 0.5
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def b27_attention_scale_by_value_width(q, k, v, mask=None):
    # divides by sqrt of the value width, the last axis of v
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -math.inf)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


# ---------------------------------------------------------------- check_padded_positions
def b27_padded_hardcoded_pad_id(input_ids, padding_idx=1):
    # RoBERTa's pad id 1 written into the code: the argument is never used
    is_token = (input_ids != 1).long()
    return torch.cumsum(is_token, dim=-1) * is_token + 1


def b27_padded_start_at_pad_id(input_ids, padding_idx=1):
    # real tokens numbered from padding_idx, one too early (first real token collides with padding)
    is_token = (input_ids != padding_idx).long()
    return (torch.cumsum(is_token, dim=-1) - 1) * is_token + padding_idx


def b27_padded_cumsum_over_batch(input_ids, padding_idx=1):
    # cumulative sum down the batch axis instead of along each sequence
    is_token = (input_ids != padding_idx).long()
    return torch.cumsum(is_token, dim=0) * is_token + padding_idx


def b27_padded_float_positions(input_ids, padding_idx=1):
    # correct numbers, but float: they cannot index an nn.Embedding
    is_token = (input_ids != padding_idx).float()
    return is_token.cumsum(-1) * is_token + padding_idx


# ---------------------------------------------------------------- check_sinusoidal
def b27_sinusoidal_float32_angles(seq_len, dim, base=10000.0):
    position = torch.arange(seq_len, dtype=torch.float32)[:, None]
    div = base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)
    angle = position / div
    table = torch.zeros(seq_len, dim)
    table[:, 0::2], table[:, 1::2] = angle.sin(), angle.cos()
    return table


def b27_sinusoidal_l_over_d(seq_len, dim, base=10000.0):
    # exponent l/d with l = 0..d/2-1 (the factor 2 of 2l/d lost)
    pair = np.arange(dim // 2)
    angle = np.arange(seq_len)[:, None] / base ** (pair / dim)
    table = np.stack([np.sin(angle), np.cos(angle)], axis=-1).reshape(seq_len, dim)
    return torch.from_numpy(table).float()


def b27_sinusoidal_concatenated(seq_len, dim, base=10000.0):
    # tensor2tensor's layout (all sines, then all cosines) on the paper's ladder
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b27_theta(dim, base)
    return torch.cat((angles.sin(), angles.cos()), -1).float()


def b27_sinusoidal_ignores_base(seq_len, dim, base=10000.0):
    exponent = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    angle = torch.arange(seq_len, dtype=torch.float64)[:, None] / 10000.0**exponent
    return torch.stack((angle.sin(), angle.cos()), -1).flatten(-2).float()


# ---------------------------------------------------------------- check_shaw_index
def b27_shaw_i_minus_j(q_len, k_len, max_distance, query_offset=0):
    # the chapter-1 convention i - j for the offset
    queries = query_offset + torch.arange(q_len)
    offsets = queries[:, None] - torch.arange(k_len)[None, :]
    return offsets.clamp(-max_distance, max_distance) + max_distance


def b27_shaw_ignores_query_offset(q_len, k_len, max_distance, query_offset=0):
    offsets = torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
    return offsets.clamp(-max_distance, max_distance) + max_distance


def b27_shaw_not_shifted(q_len, k_len, max_distance, query_offset=0):
    # clipped offsets, never moved to the row range 0..2c
    rows = torch.empty(q_len, k_len, dtype=torch.long)
    for r in range(q_len):
        for j in range(k_len):
            rows[r, j] = max(-max_distance, min(max_distance, j - (query_offset + r)))
    return rows


def b27_shaw_queries_at_end(q_len, k_len, max_distance, query_offset=0):
    # assumes cached decoding: the queries are the last q_len positions, whatever query_offset says
    queries = torch.arange(k_len - q_len, k_len)
    offsets = torch.arange(k_len)[None, :] - queries[:, None]
    return offsets.clamp(-max_distance, max_distance) + max_distance


# ---------------------------------------------------------------- check_relative_shift
def b27_shift_drop_last_row(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    rows = padded.reshape(*batch, k_len + 1, q_len)[..., :-1, :]  # should drop the first
    return rows.reshape(*batch, q_len, k_len)


def b27_shift_forgets_memory(rel_logits):
    # query t placed at position t, as without a memory: column j - t + Lk - 1
    *batch, q_len, k_len = rel_logits.shape
    out = torch.zeros_like(rel_logits)
    for t in range(q_len):
        for j in range(k_len):
            column = j - t + k_len - 1
            if column < k_len:
                out[..., t, j] = rel_logits[..., t, column]
    return out


def b27_shift_i_minus_j(rel_logits):
    # reads the column of i - j instead of j - i
    *batch, q_len, k_len = rel_logits.shape
    t = torch.arange(q_len)[:, None]
    j = torch.arange(k_len)[None, :]
    i = k_len - q_len + t
    column = ((i - j) + k_len - 1).clamp(0, k_len - 1)
    return rel_logits.gather(-1, column.expand(*batch, q_len, k_len))


# ---------------------------------------------------------------- check_t5_bucket
def _b27_t5(offsets, bidirectional, num_buckets, max_distance, *, causal_abs=False, cap=None, rounding=False,
            halve=True):
    n_b = num_buckets // 2 if (bidirectional and halve) else num_buckets
    first = torch.where(offsets > 0, n_b, 0) if bidirectional else 0
    if bidirectional or causal_abs:
        rho = offsets.abs()
    else:
        rho = (-offsets).clamp(min=0)
    e = n_b // 2
    log_part = torch.log(rho.clamp(min=1).float() / e) / math.log(max_distance / e) * (n_b - e)
    log_part = log_part.round() if rounding else log_part
    far = (e + log_part.long()).clamp(max=(n_b - 1) if cap is None else cap(n_b))
    return first + torch.where(rho < e, rho, far)


def b27_t5_i_minus_j(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    # reads relative_position as i - j
    return _b27_t5(-torch.as_tensor(relative_position).long(), bidirectional, num_buckets, max_distance)


def b27_t5_causal_abs(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    # causal: future keys bucketed by their distance instead of all going to bucket 0
    return _b27_t5(torch.as_tensor(relative_position).long(), bidirectional, num_buckets, max_distance, causal_abs=True)


def b27_t5_round_log(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    # rounds the logarithmic part instead of truncating it
    return _b27_t5(torch.as_tensor(relative_position).long(), bidirectional, num_buckets, max_distance, rounding=True)


def b27_t5_cap_off_by_one(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    # caps the far buckets at n_b instead of n_b - 1
    return _b27_t5(torch.as_tensor(relative_position).long(), bidirectional, num_buckets, max_distance,
                   cap=lambda n_b: n_b)


def b27_t5_no_halving(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    # bidirectional, but each direction gets all num_buckets buckets
    return _b27_t5(torch.as_tensor(relative_position).long(), bidirectional, num_buckets, max_distance, halve=False)


# ---------------------------------------------------------------- check_alibi_slopes
def b27_slopes_geometric_for_all(num_heads):
    # 2^(-8h/n) for every n, power of two or not
    return torch.tensor([2 ** (-8 * h / num_heads) for h in range(1, num_heads + 1)])


def b27_slopes_start_at_zero(num_heads):
    power = 2 ** math.floor(math.log2(num_heads))
    first = [2 ** (-8 * h / power) for h in range(power)]
    between = [2 ** (-8 * (2 * h + 1) / (2 * power)) for h in range(num_heads - power)]
    return first + between


def b27_slopes_ascending(num_heads):
    power = 2 ** math.floor(math.log2(num_heads))
    slopes = [2 ** (-8 * h / power) for h in range(1, power + 1)]
    slopes += [2 ** (-8 * (2 * h - 1) / (2 * power)) for h in range(1, num_heads - power + 1)]
    return torch.tensor(sorted(slopes))


def b27_slopes_halving(num_heads):
    # 1/2, 1/4, 1/8, ...: the ratio 2^(-8/n) replaced by 1/2
    return 0.5 ** torch.arange(1, num_heads + 1, dtype=torch.float32)


# ---------------------------------------------------------------- check_apply_rope
def b27_rope_half_layout(x, positions=None, base=10000.0):
    # rotate_half pairs (l, l + d/2), as in Hugging Face's Llama
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    angles = positions.double()[:, None] * _b27_theta(dim, base)
    angles = torch.cat((angles, angles), -1)
    first, second = x.chunk(2, -1)
    turned = torch.cat((-second, first), -1)
    return x * angles.cos().to(x.dtype) + turned * angles.sin().to(x.dtype)


def b27_rope_inplace_alias(x, positions=None, base=10000.0):
    # writes the first coordinates into x, then reads them back through the view `a`
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    angles = positions.double()[:, None] * _b27_theta(dim, base)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    x[..., 0::2] = a * cos - b * sin
    x[..., 1::2] = a * sin + b * cos
    return x


def b27_rope_ignores_positions(x, positions=None, base=10000.0):
    seq_len, dim = x.shape[-2:]
    positions = torch.arange(seq_len)  # the given positions are overwritten
    angles = positions.double()[:, None] * _b27_theta(dim, base)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2)


def b27_rope_float32_angles(x, positions=None, base=10000.0):
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    theta = 1.0 / base ** (torch.arange(0, dim, 2).float() / dim)
    angles = positions.float()[:, None] * theta
    z = torch.view_as_complex(x.float().reshape(*x.shape[:-1], dim // 2, 2).contiguous())
    return torch.view_as_real(z * torch.polar(torch.ones_like(angles), angles)).flatten(-2).to(x.dtype)


def b27_rope_returns_float64(x, positions=None, base=10000.0):
    # tables left in float64: a float32 input comes back float64
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    angles = positions.double()[:, None] * _b27_theta(dim, base)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * angles.cos() - b * angles.sin(), a * angles.sin() + b * angles.cos()), -1).flatten(-2)


# ---------------------------------------------------------------- check_repeat_kv
def b27_repeat_kv_tiled_expand(kv, num_heads):
    # expand on a new axis *before* the kv heads, then merge: the heads come back tiled
    *lead, h_kv, length, dim = kv.shape
    n_rep = num_heads // h_kv
    return kv.unsqueeze(-4).expand(*lead, n_rep, h_kv, length, dim).reshape(*lead, num_heads, length, dim)


def b27_repeat_kv_dim1(kv, num_heads):
    # axis 1 is the head axis for (batch, heads, L, d), not for an unbatched (heads, L, d)
    return kv.repeat_interleave(num_heads // kv.shape[1], dim=1)


def b27_repeat_kv_num_heads_times(kv, num_heads):
    # each kv head repeated num_heads times instead of num_heads / h_kv
    return torch.repeat_interleave(kv, num_heads, dim=-3)


# ---------------------------------------------------------------- check_apply_rope_2d
def b27_rope2d_blocks_of_four(x, rows, columns, base=10000.0):
    # the block-of-four layout of ex-ropeb-10 instead of the axial halves
    d = x.shape[-1]
    blocks = x.reshape(*x.shape[:-1], d // 4, 2, 2)
    row_part = blocks[..., 0, :].flatten(-2)
    col_part = blocks[..., 1, :].flatten(-2)
    row_part = apply_rope(row_part, rows, base=base)
    col_part = apply_rope(col_part, columns, base=base)
    out = torch.stack((row_part.unflatten(-1, (d // 4, 2)), col_part.unflatten(-1, (d // 4, 2))), -2)
    return out.flatten(-3)


def b27_rope2d_full_dim_ladder(x, rows, columns, base=10000.0):
    # each half rotated with the frequencies of the whole head, b^(-2l/d)
    d = x.shape[-1]
    theta = _b27_theta(d, base)[: d // 4]
    out = []
    for part, pos in zip(x.chunk(2, -1), (rows, columns), strict=True):
        angles = pos.double()[:, None] * theta
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        a, b = part[..., 0::2], part[..., 1::2]
        out.append(torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2))
    return torch.cat(out, -1)


def b27_rope2d_column_default_base(x, rows, columns, base=10000.0):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((apply_rope(first, rows, base=base), apply_rope(second, columns)), dim=-1)


def b27_rope2d_raster_index(x, rows, columns, base=10000.0):
    # one position per patch, read in raster order, on the whole vector
    width = int(columns.max()) + 1
    return apply_rope(x, rows * width + columns, base=base)


# ---------------------------------------------------------------- check_cross_attention
def b27_cross_divide_by_dk(y, z, w_q, w_k, w_v):
    scores = (y @ w_q) @ (z @ w_k).T / w_k.shape[-1]  # d_k, not its square root
    return scores.softmax(-1) @ (z @ w_v)


def b27_cross_roles_swapped(y, z, w_q, w_k, w_v):
    # queries from the memory, keys and values from the decoder states
    q, k, v = z @ w_q, y @ w_k, y @ w_v
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), -1) @ v


def b27_cross_transposed_weights(y, z, w_q, w_k, w_v):
    # nn.Linear habit: x @ W.T
    q, k, v = y @ w_q.T, z @ w_k.T, z @ w_v.T
    return torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), -1) @ v


def b27_cross_global_softmax(y, z, w_q, w_k, w_v):
    # one softmax over the whole score matrix
    scores = (y @ w_q) @ (z @ w_k).T / math.sqrt(w_q.shape[-1])
    return scores.flatten().softmax(0).view_as(scores) @ (z @ w_v)


# ---------------------------------------------------------------- check_position_recovery
def b27_recovery_input_precision(outputs):
    return (1.0 / outputs - 1.0).round()


def b27_recovery_no_minus_one(outputs):
    return (1.0 / outputs.double()).round()


def b27_recovery_floor(outputs):
    return torch.floor(1.0 / outputs.double() - 1.0)


# ---------------------------------------------------------------- check_position_parameter_counts
def b27_counts_whole_map(positions, width):
    # part 2 counted as the whole (d + N) x d map
    return positions * width, (width + positions) * width, 3 * positions * width


def b27_counts_one_projection(positions, width):
    return positions * width, positions * width, positions * width


def b27_counts_whole_qkv(positions, width):
    # part 3 counted as the three whole projections, not the extra rows
    return positions * width, positions * width, 3 * (width + positions) * width


# ---------------------------------------------------------------- check_decayed_rows
def b27_decay_without_lr(initial, lr, weight_decay, steps):
    return initial * (1 - weight_decay) ** steps


def b27_decay_steps_minus_one(initial, lr, weight_decay, steps):
    # "the first step has no decay yet"
    return initial * (1 - lr * weight_decay) ** (steps - 1)


def b27_decay_exponent_grouping(initial, lr, weight_decay, steps):
    return initial * (1 - lr) ** (weight_decay * steps)


def b27_decay_in_place(initial, lr, weight_decay, steps):
    # right value, but the caller's tensor of initial rows is overwritten
    return initial.mul_((1 - lr * weight_decay) ** steps)


# ---------------------------------------------------------------- check_concatenated_sinusoidal
def b27_t2t_paper_ladder(seq_len, dim, base=10000.0):
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * _b27_theta(dim, base)
    return torch.cat((angles.sin(), angles.cos()), dim=-1)


def b27_t2t_cos_first(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.cos(), angles.sin()), dim=-1)


def b27_t2t_interleaved(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.stack((angles.sin(), angles.cos()), -1).flatten(-2)


def b27_t2t_half_not_half_minus_one(seq_len, dim, base=10000.0):
    half = dim // 2
    log_increment = math.log(base) / half  # tensor2tensor divides by half - 1
    theta = torch.exp(-log_increment * torch.arange(half, dtype=torch.float64))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), dim=-1)


# ---------------------------------------------------------------- check_alibi_bias_from_slopes
def b27_alibi_slopes_i_minus_j(slopes, length):
    pos = torch.arange(length)
    return slopes[:, None, None] * (pos[:, None] - pos[None, :]).float()


def b27_alibi_recomputes_slopes(slopes, length):
    # ignores the slopes it is given and rebuilds ALiBi's from the number of heads
    h = len(slopes)
    own = torch.tensor([2 ** (-8 * r / h) for r in range(1, h + 1)])
    pos = torch.arange(length)
    return own[:, None, None] * (pos[None, :] - pos[:, None]).float()


def b27_alibi_diagonal_off_by_one(slopes, length):
    # queries counted from 1, keys from 0
    rel = torch.arange(length)[None, :] - torch.arange(1, length + 1)[:, None]
    return torch.einsum("h,ij->hij", slopes, rel.float())


def b27_alibi_float16(slopes, length):
    pos = torch.arange(length, dtype=torch.float16)
    return slopes.half()[:, None, None] * (pos[None, :] - pos[:, None])


# ---------------------------------------------------------------- check_reversal_gap
def b27_reversal_feature_axis(layer, x):
    return (layer(x.flip(-1)) - layer(x).flip(-1)).abs().max().item()


def b27_reversal_mean(layer, x):
    reversal = torch.arange(x.shape[-2] - 1, -1, -1)
    return (layer(x[reversal]) - layer(x)[reversal]).abs().mean().item()


def b27_reversal_output_not_reversed(layer, x):
    return (layer(x.flip(0)) - layer(x)).abs().max().item()


def b27_reversal_signed_max(layer, x):
    return float((layer(x.flip(-2)) - layer(x).flip(-2)).max())


# ---------------------------------------------------------------- check_alibi_bias_at_positions
def b27_alibi_at_indices(slopes, positions):
    index = torch.arange(len(positions), dtype=torch.float32)
    return -slopes[:, None, None] * (index[None, :] - index[:, None]).abs()


def b27_alibi_at_causal_form(slopes, positions):
    # chapter 4's causal form m (p_j - p_i), without the absolute value
    return slopes[:, None, None] * (positions[None, :] - positions[:, None])


def b27_alibi_at_positive(slopes, positions):
    return slopes[:, None, None] * (positions[None, :] - positions[:, None]).abs()


def b27_alibi_at_integer_positions(slopes, positions):
    p = positions.long()
    return -slopes[:, None, None] * (p[None, :] - p[:, None]).abs()


# ---------------------------------------------------------------- check_yarn_frequencies
def _b27_yarn(dim, base, factor, length, beta_fast, beta_slow, *, log_slow=math.log, scale=None):
    theta = _b27_theta(dim, base)

    def pair_at(turns):
        return dim * math.log(length / (2 * math.pi * turns)) / (2 * log_slow(base))

    low = max(math.floor(pair_at(beta_fast)), 0)
    high = min(math.ceil(pair_at(beta_slow)), dim - 1)
    high += 0.001 if low == high else 0
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    interpolated = theta / factor if scale is None else scale(theta, factor)
    return theta * (1 - ramp) + interpolated * ramp


def b27_yarn_log2_of_base(dim, base, factor, original_max_position, beta_fast, beta_slow):
    # ln in the numerator, log2 of the base in the denominator
    return _b27_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, log_slow=math.log2)


def b27_yarn_multiply_by_factor(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b27_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, scale=lambda theta, s: theta * s)


def b27_yarn_extended_length(dim, base, factor, original_max_position, beta_fast, beta_slow):
    # turns counted over the extended length s L instead of the training length L
    return _b27_yarn(dim, base, factor, factor * original_max_position, beta_fast, beta_slow)


def b27_yarn_pair_reversed(dim, base, factor, original_max_position, beta_fast, beta_slow):
    frequencies = _b27_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow)
    attention_factor = 0.1 * math.log(factor) + 1.0
    return attention_factor, frequencies  # the order of yarn_frequencies is (frequencies, factor)


# ---------------------------------------------------------------- check_llama3_frequencies
def b27_llama3_inverse_turns(dim, base, factor, train_len, alpha, beta):
    # wavelength over length (lambda / L) where the rule uses turns L / lambda
    theta = rope_frequencies(dim, base).double()
    ratio = (2 * math.pi / theta) / train_len
    kept = ((ratio - alpha) / (beta - alpha)).clamp(0, 1)
    return (1 - kept) * theta / factor + kept * theta


def b27_llama3_ramp_reversed(dim, base, factor, train_len, alpha, beta):
    theta = rope_frequencies(dim, base).double()
    turns = train_len * theta / (2 * math.pi)
    kept = ((turns - beta) / (alpha - beta)).clamp(0, 1)
    return (1 - kept) * theta / factor + kept * theta


def b27_llama3_divides_fast(dim, base, factor, train_len, alpha, beta):
    # the division by s applied to the pairs that turn often
    theta = rope_frequencies(dim, base).double()
    turns = train_len * theta / (2 * math.pi)
    kept = ((turns - alpha) / (beta - alpha)).clamp(0, 1)
    return (1 - kept) * theta + kept * theta / factor


def b27_llama3_no_clamp(dim, base, factor, train_len, alpha, beta):
    theta = rope_frequencies(dim, base).double()
    turns = train_len * theta / (2 * math.pi)
    kept = (turns - alpha) / (beta - alpha)
    return (1 - kept) * theta / factor + kept * theta


# ---------------------------------------------------------------- check_extended_rows
def _b27_interpolate(table, where):
    rows = table.shape[0]
    low = where.floor().long().clamp(max=rows - 2)
    fraction = (where - low)[:, None].to(table.dtype)
    return (1 - fraction) * table[low] + fraction * table[low + 1]


def b27_rows_interpolate_to_L(table, length, option):
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1)]
    if option == "copy":
        return table[torch.arange(length) % rows]
    where = torch.arange(length) * rows / length  # m L / L' instead of m (L - 1) / (L' - 1)
    return _b27_interpolate(table, where.clamp(max=rows - 1))


def b27_rows_or_always_true(table, length, option):
    rows = table.shape[0]
    if option == "clip" or "copy":  # always true: every option clips
        return table[torch.arange(length).clamp(max=rows - 1)]
    return _b27_interpolate(table, torch.linspace(0, rows - 1, length))


def b27_rows_nearest(table, length, option):
    rows = table.shape[0]
    m = torch.arange(length)
    if option == "clip":
        return table[m.clamp(max=rows - 1)]
    if option == "copy":
        return table[m % rows]
    return table[torch.linspace(0, rows - 1, length).round().long()]


def b27_rows_copy_period_minus_one(table, length, option):
    rows = table.shape[0]
    m = torch.arange(length)
    if option == "clip":
        return table[torch.minimum(m, torch.tensor(rows - 1))]
    if option == "copy":
        return table[m % (rows - 1)]
    return _b27_interpolate(table, torch.linspace(0, rows - 1, length))


# ---------------------------------------------------------------- check_unrotated_outputs
def b27_unrotate_inplace_alias(outputs, positions, base=10000.0):
    angles = -positions.double()[:, None] * _b27_theta(outputs.shape[-1], base)
    cos, sin = angles.cos().to(outputs.dtype), angles.sin().to(outputs.dtype)
    a, b = outputs[..., 0::2], outputs[..., 1::2]
    outputs[..., 0::2] = a * cos - b * sin
    outputs[..., 1::2] = a * sin + b * cos
    return outputs


def b27_unrotate_own_positions(outputs, positions, base=10000.0):
    # turns back by the row index, not by the given positions
    return apply_rope(outputs, -torch.arange(outputs.shape[-2]), base=base)


def b27_unrotate_half_layout(outputs, positions, base=10000.0):
    return apply_rope(outputs, -positions, base=base, layout="half")


def b27_unrotate_default_base(outputs, positions, base=10000.0):
    return apply_rope(outputs, -positions)


# ---------------------------------------------------------------- check_linear_rope_attention
def _b27_phi(x):
    return torch.nn.functional.elu(x) + 1


def b27_linear_excludes_self(q, k, v, base=10000.0):
    # the state is read before key i is added: sums over j < i
    phi_q, phi_k = _b27_phi(q), _b27_phi(k)
    rot_q, rot_k = apply_rope(phi_q, base=base), apply_rope(phi_k, base=base)
    state = torch.zeros(q.shape[-1], v.shape[-1], dtype=q.dtype)
    normaliser = torch.zeros(q.shape[-1], dtype=q.dtype)
    outputs = []
    for i in range(q.shape[0]):
        outputs.append(rot_q[i] @ state / (phi_q[i] @ normaliser))
        state = state + torch.outer(rot_k[i], v[i])
        normaliser = normaliser + phi_k[i]
    return torch.stack(outputs)


def b27_linear_relu_feature(q, k, v, base=10000.0):
    phi_q, phi_k = torch.relu(q) + 1e-6, torch.relu(k) + 1e-6
    rot_q, rot_k = apply_rope(phi_q, base=base), apply_rope(phi_k, base=base)
    numer = torch.cumsum(rot_k[:, :, None] * v[:, None, :], 0)
    denom = torch.cumsum(phi_k, 0)
    return torch.einsum("nd,nde->ne", rot_q, numer) / (phi_q * denom).sum(-1, keepdim=True)


def b27_linear_rotate_then_phi(q, k, v, base=10000.0):
    # phi(R q) instead of R phi(q)
    rot_q, rot_k = _b27_phi(apply_rope(q, base=base)), _b27_phi(apply_rope(k, base=base))
    phi_q, phi_k = _b27_phi(q), _b27_phi(k)
    numer = torch.cumsum(rot_k[:, :, None] * v[:, None, :], 0)
    denom = torch.cumsum(phi_k, 0)
    return torch.einsum("nd,nde->ne", rot_q, numer) / (phi_q * denom).sum(-1, keepdim=True)


def b27_linear_not_causal(q, k, v, base=10000.0):
    phi_q, phi_k = _b27_phi(q), _b27_phi(k)
    rot_q, rot_k = apply_rope(phi_q, base=base), apply_rope(phi_k, base=base)
    return (rot_q @ (rot_k.T @ v)) / (phi_q @ phi_k.sum(0))[:, None]


# ---------------------------------------------------------------- check_decode_positions
def b27_decode_one_late(cache_len, num_new):
    return torch.arange(cache_len + 1, cache_len + num_new + 1)


def b27_decode_one_early(cache_len, num_new):
    # continues from the last cached position instead of after it
    return list(range(cache_len - 1, cache_len - 1 + num_new))


def b27_decode_range_end(cache_len, num_new):
    return torch.arange(cache_len, num_new)


def b27_decode_linspace(cache_len, num_new):
    return torch.linspace(cache_len, cache_len + num_new, num_new)


# ---------------------------------------------------------------- check_streaming_cache
def b27_stream_wrong_direction(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    moved = apply_rope(cached[..., total - window :, :], torch.full((window,), shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b27_stream_shift_off_by_one(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks + 1
    moved = apply_rope(cached[..., total - window :, :], torch.full((window,), -shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b27_stream_four_sinks(cached, window, sinks=4):
    # StreamingLLM's 4 written in: the sinks argument is ignored
    total = cached.shape[-2]
    moved = apply_rope(cached[..., total - window :, :], torch.full((window,), -(total - window - 4)))
    return torch.cat((cached[..., :4, :], moved), dim=-2)


def b27_stream_rotates_sinks(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    kept = torch.cat((cached[..., :sinks, :], cached[..., total - window :, :]), dim=-2)
    return apply_rope(kept, torch.full((sinks + window,), -shift))


def b27_stream_axis_one(cached, window, sinks=4):
    # indexes axis 1 as the token axis, right only for (heads, n, d)
    total = cached.shape[1]
    shift = total - window - sinks
    moved = apply_rope(cached[:, total - window :], torch.full((window,), -shift))
    return torch.cat((cached[:, :sinks], moved), dim=1)


# ---------------------------------------------------------------- check_rope_matrix_2d_blocks
def _b27_blocks(angles):
    return torch.block_diag(
        *[torch.tensor([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], dtype=torch.float64) for a in angles]
    )


def b27_blocks_2l_over_d(row, column, dim, base=10000.0):
    theta = base ** (-2 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    return _b27_blocks(torch.stack((row * theta, column * theta), -1).flatten().tolist())


def b27_blocks_transposed(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    return _b27_blocks(torch.stack((row * theta, column * theta), -1).flatten().tolist()).T


def b27_blocks_column_first(row, column, dim, base=10000.0):
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    return _b27_blocks(torch.stack((column * theta, row * theta), -1).flatten().tolist())


def b27_blocks_axial(row, column, dim, base=10000.0):
    # the axial layout of the chapter: first half by row, second half by column
    theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    return _b27_blocks((row * theta).tolist() + (column * theta).tolist())


# ---------------------------------------------------------------- check_slowest_wavelength
def b27_wavelength_l_over_d(dim, base):
    # exponent l/d for the last pair l = d/2 - 1
    return 2 * math.pi * base ** ((dim / 2 - 1) / dim)


def b27_wavelength_degrees(dim, base):
    return 360.0 * base ** (1 - 2 / dim)


def b27_wavelength_precedence(dim, base):
    return 2 * math.pi * base**1 - 2 / dim


def b27_wavelength_dim_as_pairs(dim, base):
    # the last of `dim` pairs, as if dim counted pairs
    return 2 * math.pi * base ** (2 * (dim - 1) / (2 * dim))


# ---------------------------------------------------------------- check_expected_score
def b27_expected_sine_sign(cross, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(2 * len(cross), base).double()
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1]) + angles.sin() * (cross[:, 0, 1] - cross[:, 1, 0])).sum(-1)


def b27_expected_pairs_ladder(cross, offsets, base=10000.0):
    # b^(-2l/n) with n the number of pairs: the ladder of a head of width d/2
    n = len(cross)
    theta = base ** (-2 * torch.arange(n, dtype=torch.float64) / n)
    angles = offsets.double()[:, None] * theta
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1]) + angles.sin() * (cross[:, 1, 0] - cross[:, 0, 1])).sum(-1)


def b27_expected_trace_only(cross, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(2 * len(cross), base).double()
    return (angles.cos() * torch.diagonal(cross, dim1=-2, dim2=-1).sum(-1)).sum(-1)


def b27_expected_mean_over_pairs(cross, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(2 * len(cross), base).double()
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1]) + angles.sin() * (cross[:, 1, 0] - cross[:, 0, 1])).mean(
        -1
    )


# ---------------------------------------------------------------- check_score_asymmetry
def _b27_eta(query, key):
    return complex_pairs(query.double()).conj() * complex_pairs(key.double())


def b27_asymmetry_sum(query, key, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(query.shape[-1], base).double()
    eta = _b27_eta(query, key)
    return (eta * torch.exp(1j * angles)).sum(-1).real + (eta * torch.exp(-1j * angles)).sum(-1).real


def b27_asymmetry_conjugate_key(query, key, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(query.shape[-1], base).double()
    eta = complex_pairs(query.double()) * complex_pairs(key.double()).conj()
    return -2 * (eta.imag * angles.sin()).sum(-1)


def b27_asymmetry_half_pairs(query, key, offsets, base=10000.0):
    # pairs (l, l + d/2), as in the half layout
    d = query.shape[-1]
    qa, qb = query.double().chunk(2, -1)
    ka, kb = key.double().chunk(2, -1)
    im = qa * kb - qb * ka
    angles = offsets.double()[:, None] * rope_frequencies(d, base).double()
    return -2 * (im * angles.sin()).sum(-1)


def b27_asymmetry_missing_two(query, key, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(query.shape[-1], base).double()
    return -(_b27_eta(query, key).imag * angles.sin()).sum(-1)


# ---------------------------------------------------------------- check_positional_head_query
def b27_head_query_minus_target(key, target, base=10000.0):
    return apply_rope(key[None], torch.tensor([-target]), base=base)[0]


def b27_head_query_default_base(key, target, base=10000.0):
    return apply_rope(key[None], torch.tensor([target]))[0]


def b27_head_query_half_layout(key, target, base=10000.0):
    return apply_rope(key[None], torch.tensor([target]), base=base, layout="half")[0]


def b27_head_query_target_plus_one(key, target, base=10000.0):
    # "the query sits one after the key"
    return apply_rope(key[None], torch.tensor([target + 1]), base=base)[0]


# ---------------------------------------------------------------- check_pi_frequencies
def b27_pi_one_per_coordinate(dim, base, factor):
    # d frequencies, one per coordinate, instead of d/2
    return base ** (-torch.arange(dim, dtype=torch.float64) / dim) / factor


def b27_pi_slow_half_only(dim, base, factor):
    # divides only the slow half of the pairs
    theta = _b27_theta(dim, base)
    theta[dim // 4 :] /= factor
    return theta


def b27_pi_factor_in_exponent(dim, base, factor):
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim / factor)


# ---------------------------------------------------------------- check_ntk_frequencies
def b27_ntk_per_pair_missing_two(dim, base, factor):
    # theta_l s^(-l/(d-2)) where the rule is s^(-2l/(d-2))
    pair = torch.arange(dim // 2, dtype=torch.float64)
    return _b27_theta(dim, base) * factor ** (-pair / (dim - 2))


def b27_ntk_integer_division(dim, base, factor):
    new_base = base * factor ** (dim // (dim - 2))
    return _b27_theta(dim, new_base)


def b27_ntk_l_over_d(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    return new_base ** (-torch.arange(dim // 2, dtype=torch.float64) / dim)


# ---------------------------------------------------------------- check_dynamic_ntk_frequencies
def b27_dynamic_minus_s_minus_one(dim, base, factor, original_max_position, seq_len):
    length = max(seq_len, original_max_position)
    scale = max(factor * length / original_max_position - factor - 1, 1.0)  # - (s - 1) written - s - 1
    return _b27_theta(dim, base * scale ** (dim / (dim - 2)))


def b27_dynamic_seq_len_minus_one(dim, base, factor, original_max_position, seq_len):
    # seq_len read as the last position index
    length = max(seq_len - 1, original_max_position)
    scale = factor * length / original_max_position - (factor - 1)
    return _b27_theta(dim, base * scale ** (dim / (dim - 2)))


def b27_dynamic_static_above(dim, base, factor, original_max_position, seq_len):
    # beyond the training length, the static factor: seq_len only switches it on
    scale = factor if seq_len > original_max_position else 1.0
    return _b27_theta(dim, base * scale ** (dim / (dim - 2)))


def b27_dynamic_threshold_sL(dim, base, factor, original_max_position, seq_len):
    length = max(seq_len, factor * original_max_position)
    scale = factor * length / original_max_position - (factor - 1)
    return _b27_theta(dim, base * scale ** (dim / (dim - 2)))


# Keywords fixed before any checker was run: a message must contain one of them (case-insensitive)
# in its diagnosis for the mistake to count as named.
_B27_IN_PLACE = (
    "in place",
    "in-place",
    "inplace",
    "overwr",
    "mutat",
    "modifies the input",
    "modified the input",
    "changed the input",
    "changes its input",
    "alias",
)
HELDOUT_BATCH_27 = [
    # attention
    Heldout(
        "check_attention",
        "masked scores filled with 0, not -inf",
        b27_attention_zero_fill,
        (
            "-inf",
            "fill value",
            "filled with 0",
            "masked keys",
            "masked-out",
            "hidden keys",
            "weight on masked",
            "masked entries",
        ),
    ),
    Heldout(
        "check_attention",
        "mask read as True = hide",
        b27_attention_mask_true_hides,
        ("invert", "opposite", "true means", "true = ", "true marks", "~mask", "complement", "convention"),
    ),
    Heldout(
        "check_attention",
        "scaled by sqrt of the value width",
        b27_attention_scale_by_value_width,
        ("sqrt", "√", "square root", "value width", "d_v", "temperature", "scaling factor"),
    ),
    # padded positions
    Heldout(
        "check_padded_positions",
        "pad id 1 hard-coded",
        b27_padded_hardcoded_pad_id,
        ("ignor", "hard-cod", "hardcod", "padding_idx argument", "other padding", "pad id", "padding id"),
    ),
    Heldout(
        "check_padded_positions",
        "real tokens start at padding_idx",
        b27_padded_start_at_pad_id,
        ("off by one", "off-by-one", "one too", "first real token", "start at", "starts at", "collide"),
    ),
    Heldout(
        "check_padded_positions",
        "cumsum over the batch axis",
        b27_padded_cumsum_over_batch,
        (
            "axis",
            "dim=0",
            "dimension",
            "across the batch",
            "batch axis",
            "along the sequence",
            "each sequence",
            "each row",
        ),
    ),
    Heldout(
        "check_padded_positions",
        "float positions",
        b27_padded_float_positions,
        ("dtype", "long", "int64", "integer", "float"),
    ),
    # sinusoidal
    Heldout(
        "check_sinusoidal",
        "angles in float32",
        b27_sinusoidal_float32_angles,
        ("precision", "float64", "double", "rounding"),
    ),
    Heldout(
        "check_sinusoidal",
        "exponent l/d",
        b27_sinusoidal_l_over_d,
        ("exponent", "2ℓ/d", "2l/d", "2i/d", "factor of 2", "factor 2", "ℓ/d", "l/d"),
    ),
    Heldout(
        "check_sinusoidal",
        "sines first, then cosines",
        b27_sinusoidal_concatenated,
        ("interleav", "concatenat", "layout", "sines first", "halves", "all the sines", "sines then"),
    ),
    Heldout(
        "check_sinusoidal",
        "base 10000 hard-coded",
        b27_sinusoidal_ignores_base,
        ("ignor", "hard-cod", "hardcod", "base argument", "other base", "not use the base", "given base"),
    ),
    # Shaw
    Heldout(
        "check_shaw_index",
        "offset i - j",
        b27_shaw_i_minus_j,
        ("sign", "i - j", "i−j", "reversed", "mirror", "negated", "direction"),
    ),
    Heldout(
        "check_shaw_index",
        "query_offset ignored",
        b27_shaw_ignores_query_offset,
        (
            "ignor",
            "query positions",
            "queries start",
            "query offset",
            "offset of the queries",
            "cached queries",
            "not shifted",
        ),
    ),
    Heldout(
        "check_shaw_index",
        "clipped offsets not shifted by c",
        b27_shaw_not_shifted,
        ("negative", "shift", "row 0", "not shifted", "rows 0", "below 0"),
    ),
    Heldout(
        "check_shaw_index",
        "queries assumed at the end",
        b27_shaw_queries_at_end,
        ("ignor", "last", "end of", "query offset", "queries start", "query positions", "assum"),
    ),
    # relative shift
    Heldout(
        "check_relative_shift",
        "drops the last row of the reshaped matrix",
        b27_shift_drop_last_row,
        ("first row", "last row", "drop", "off by one", "off-by-one", "one row", "one place", "shifted by one"),
    ),
    Heldout(
        "check_relative_shift",
        "queries placed at 0.. (memory forgotten)",
        b27_shift_forgets_memory,
        ("cached", "lk - lq", "l_k - l_q", "queries sit", "query position", "offset of the queries", "last queries"),
    ),
    Heldout(
        "check_relative_shift",
        "column of i - j",
        b27_shift_i_minus_j,
        ("sign", "i - j", "reversed", "mirror", "direction", "negated"),
    ),
    # T5
    Heldout(
        "check_t5_bucket",
        "offsets read as i - j",
        b27_t5_i_minus_j,
        ("sign", "i - j", "direction", "reversed", "mirror", "negated", "past and future", "swapped"),
    ),
    Heldout(
        "check_t5_bucket",
        "causal: future keys by distance",
        b27_t5_causal_abs,
        ("future", "positive offsets", "keys after", "bucket 0", "clamp", "later keys"),
    ),
    Heldout(
        "check_t5_bucket",
        "log part rounded, not truncated",
        b27_t5_round_log,
        ("rounded", "rounding", "floor", "truncat", "nearest", "int("),
    ),
    Heldout(
        "check_t5_bucket",
        "far buckets capped at n_b",
        b27_t5_cap_off_by_one,
        (
            "cap",
            "last bucket",
            "overflow",
            "n_b - 1",
            "num_buckets - 1",
            "off by one",
            "off-by-one",
            "largest bucket",
            "max bucket",
            "out of range",
        ),
    ),
    Heldout(
        "check_t5_bucket",
        "bidirectional without halving",
        b27_t5_no_halving,
        ("half", "halv", "num_buckets // 2", "two halves", "each direction", "split"),
    ),
    # ALiBi slopes
    Heldout(
        "check_alibi_slopes",
        "geometric rule for any head count",
        b27_slopes_geometric_for_all,
        ("power of two", "power of 2", "non-power", "every other", "closest power", "not a power"),
    ),
    Heldout(
        "check_alibi_slopes",
        "h from 0",
        b27_slopes_start_at_zero,
        ("off by one", "off-by-one", "first slope", "h = 1", "start", "slope 1", "one place", "shifted"),
    ),
    Heldout(
        "check_alibi_slopes",
        "ascending order",
        b27_slopes_ascending,
        ("order", "reversed", "increasing", "ascending", "decreasing", "sorted", "steepest"),
    ),
    Heldout(
        "check_alibi_slopes",
        "ratio 1/2 for every head count",
        b27_slopes_halving,
        ("ratio", "2^(-8/n)", "8/n", "exponent", "geometric", "1/2", "halv"),
    ),
    # apply_rope
    Heldout(
        "check_apply_rope",
        "half layout",
        b27_rope_half_layout,
        ("layout", "half", "interleav", "rotate_half", "adjacent", "pairing", "pairs ("),
    ),
    Heldout("check_apply_rope", "in-place through a view", b27_rope_inplace_alias, _B27_IN_PLACE),
    Heldout(
        "check_apply_rope",
        "given positions ignored",
        b27_rope_ignores_positions,
        ("ignor", "given positions", "default positions", "positions argument", "0, 1, 2", "arange"),
    ),
    Heldout(
        "check_apply_rope", "float32 angles", b27_rope_float32_angles, ("precision", "float64", "double", "rounding")
    ),
    Heldout(
        "check_apply_rope",
        "float64 result for float32 input",
        b27_rope_returns_float64,
        ("dtype", "promot", "same type", "like x", "type of x", "returned float64", "float64 result"),
    ),
    # repeat_kv
    Heldout(
        "check_repeat_kv",
        "expand before the head axis: tiled",
        b27_repeat_kv_tiled_expand,
        ("tile", "tiled", "repeat_interleave", "group", "consecutive", "order", "cycl"),
    ),
    Heldout(
        "check_repeat_kv",
        "dim=1 as head axis",
        b27_repeat_kv_dim1,
        ("axis", "dim=1", "dimension", "unbatched", "-3", "batch", "head axis"),
    ),
    Heldout(
        "check_repeat_kv",
        "num_heads repetitions",
        b27_repeat_kv_num_heads_times,
        ("num_heads // ", "group size", "ratio", "too many", "repetitions", "times each", "h / h_kv", "h/h_kv"),
    ),
    # 2-D RoPE
    Heldout(
        "check_apply_rope_2d",
        "blocks of four instead of halves",
        b27_rope2d_blocks_of_four,
        ("block", "halves", "layout", "first half", "axial", "chunk"),
    ),
    Heldout(
        "check_apply_rope_2d",
        "full-head ladder in each half",
        b27_rope2d_full_dim_ladder,
        ("d/2", "half width", "frequenc", "full head", "full dimension", "whole head", "4ℓ/d", "ladder"),
    ),
    Heldout(
        "check_apply_rope_2d",
        "default base for the columns",
        b27_rope2d_column_default_base,
        ("ignor", "second half", "column half", "default base", "base argument", "given base"),
    ),
    Heldout(
        "check_apply_rope_2d",
        "one raster index per patch",
        b27_rope2d_raster_index,
        ("raster", "flatten", "1-d", "one-dimensional", "single position", "row-major", "rows and columns"),
    ),
    # cross-attention
    Heldout(
        "check_cross_attention",
        "divided by d_k, not sqrt(d_k)",
        b27_cross_divide_by_dk,
        ("sqrt", "√", "square root", "scale", "temperature"),
    ),
    Heldout(
        "check_cross_attention",
        "queries from z, keys and values from y",
        b27_cross_roles_swapped,
        ("swap", "roles", "queries come", "queries from", "decoder", "y and z", "exchanged"),
    ),
    Heldout(
        "check_cross_attention",
        "weights transposed",
        b27_cross_transposed_weights,
        ("transpos", "orientation", "w_q.t", "w^t"),
    ),
    Heldout(
        "check_cross_attention",
        "softmax over the whole matrix",
        b27_cross_global_softmax,
        (
            "each row",
            "per row",
            "row sums",
            "row-wise",
            "sum to 1",
            "sums to 1",
            "normalis",
            "normaliz",
            "each query",
            "whole matrix",
            "over the keys",
        ),
    ),
    # position recovery
    Heldout(
        "check_position_recovery",
        "computed in the input's precision",
        b27_recovery_input_precision,
        ("float64", "double", "precision", "dtype", "low-precision", "in the input"),
    ),
    Heldout(
        "check_position_recovery",
        "1/o without - 1",
        b27_recovery_no_minus_one,
        ("off by one", "off-by-one", "one too", "shifted by one", "missing - 1", "without the - 1", "forgot"),
    ),
    Heldout(
        "check_position_recovery",
        "floor instead of round",
        b27_recovery_floor,
        ("rounded", "rounding", "floor", "truncat", "nearest"),
    ),
    # parameter counts
    Heldout(
        "check_position_parameter_counts",
        "part 2: the whole map",
        b27_counts_whole_map,
        ("whole map", "token part", "position part", "(d + n)", "(n + d)", "only the position", "token rows"),
    ),
    Heldout(
        "check_position_parameter_counts",
        "part 3: one projection",
        b27_counts_one_projection,
        ("three", "q, k and v", "query, key and value", "each of the", "3 n d", "3nd", "3·n·d"),
    ),
    Heldout(
        "check_position_parameter_counts",
        "part 3: the whole projections",
        b27_counts_whole_qkv,
        ("extra", "whole", "without positions", "difference", "token", "only the position"),
    ),
    # decayed rows
    Heldout(
        "check_decayed_rows",
        "learning rate left out",
        b27_decay_without_lr,
        ("learning rate", "η", "lr *", "lr·", "without lr", "ignor"),
    ),
    Heldout(
        "check_decayed_rows",
        "steps - 1",
        b27_decay_steps_minus_one,
        ("off by one", "off-by-one", "steps - 1", "one step", "one fewer", "t - 1"),
    ),
    Heldout(
        "check_decayed_rows",
        "(1 - lr)^(wd T)",
        b27_decay_exponent_grouping,
        ("grouping", "product", "lr * weight_decay", "η λ", "ηλ", "lr·wd", "parenthes", "exponent"),
    ),
    Heldout("check_decayed_rows", "decays the input in place", b27_decay_in_place, _B27_IN_PLACE),
    # concatenated sinusoidal
    Heldout(
        "check_concatenated_sinusoidal",
        "the paper's ladder",
        b27_t2t_paper_ladder,
        ("ladder", "d/2 - 1", "d/2-1", "half - 1", "exponent", "frequenc", "2ℓ/d"),
    ),
    Heldout(
        "check_concatenated_sinusoidal",
        "cosines first",
        b27_t2t_cos_first,
        ("order", "swap", "sines first", "cosines first", "cos first", "sin and cos", "cos and sin"),
    ),
    Heldout(
        "check_concatenated_sinusoidal",
        "interleaved",
        b27_t2t_interleaved,
        ("interleav", "concatenat", "layout", "halves", "alternat"),
    ),
    Heldout(
        "check_concatenated_sinusoidal",
        "log increment over d/2",
        b27_t2t_half_not_half_minus_one,
        ("d/2 - 1", "d/2-1", "half - 1", "off by one", "off-by-one", "last frequency", "1/b", "denominator"),
    ),
    # ALiBi from slopes
    Heldout(
        "check_alibi_bias_from_slopes",
        "m (i - j)",
        b27_alibi_slopes_i_minus_j,
        ("sign", "i - j", "positive", "reward", "negat", "mirror"),
    ),
    Heldout(
        "check_alibi_bias_from_slopes",
        "slopes recomputed",
        b27_alibi_recomputes_slopes,
        ("ignor", "given slopes", "slopes you", "recomput", "own slopes", "slopes argument", "not use the slopes"),
    ),
    Heldout(
        "check_alibi_bias_from_slopes",
        "queries counted from 1",
        b27_alibi_diagonal_off_by_one,
        ("off by one", "off-by-one", "diagonal", "shift", "one place", "j - i - 1"),
    ),
    Heldout(
        "check_alibi_bias_from_slopes",
        "bias in float16",
        b27_alibi_float16,
        ("float16", "half precision", "precision", "dtype", "float32", "rounding"),
    ),
    # reversal gap
    Heldout(
        "check_reversal_gap",
        "feature axis reversed",
        b27_reversal_feature_axis,
        ("axis", "feature", "sequence axis", "columns", "last dimension", "token axis", "flip(-1)"),
    ),
    Heldout(
        "check_reversal_gap",
        "mean instead of max",
        b27_reversal_mean,
        ("mean", "average", "instead of the max", "not the largest", "not the maximum"),
    ),
    Heldout(
        "check_reversal_gap",
        "output not reversed back",
        b27_reversal_output_not_reversed,
        (
            "reverse the output",
            "output reversed",
            "j layer(x)",
            "both sides",
            "unreversed",
            "not reversed",
            "reversed output",
        ),
    ),
    Heldout(
        "check_reversal_gap",
        "signed max",
        b27_reversal_signed_max,
        ("abs", "absolute", "signed", "negative", "magnitude"),
    ),
    # ALiBi at positions
    Heldout(
        "check_alibi_bias_at_positions",
        "indices instead of positions",
        b27_alibi_at_indices,
        ("ignor", "indices", "index instead", "actual positions", "real positions", "position values", "arange"),
    ),
    Heldout(
        "check_alibi_bias_at_positions",
        "causal form, no |.|",
        b27_alibi_at_causal_form,
        ("abs", "symmetric", "absolute", "causal", "keys after", "later keys"),
    ),
    Heldout(
        "check_alibi_bias_at_positions",
        "positive bias",
        b27_alibi_at_positive,
        ("sign", "negative", "reward", "penal", "minus"),
    ),
    Heldout(
        "check_alibi_bias_at_positions",
        "positions cast to integers",
        b27_alibi_at_integer_positions,
        ("integer", "long", "truncat", "fraction", "rounded", "rounding", "real-valued", "non-integer"),
    ),
    # YaRN
    Heldout(
        "check_yarn_frequencies",
        "log2 of the base",
        b27_yarn_log2_of_base,
        ("log2", "logarithm", "ln", "natural log", "base of the log", "log base"),
    ),
    Heldout(
        "check_yarn_frequencies",
        "slow pairs multiplied by s",
        b27_yarn_multiply_by_factor,
        ("divide", "multipl", "inverse", "faster", "1/s", "θ/s", "theta/s", "times s"),
    ),
    Heldout(
        "check_yarn_frequencies",
        "turns over s L",
        b27_yarn_extended_length,
        ("training length", "extended length", "s l", "s·l", "factor *", "l'", "target length"),
    ),
    Heldout(
        "check_yarn_frequencies",
        "(attention factor, frequencies)",
        b27_yarn_pair_reversed,
        ("order", "first element", "tuple", "swapped", "(frequencies, "),
    ),
    # llama3
    Heldout(
        "check_llama3_frequencies",
        "lambda / L instead of L / lambda",
        b27_llama3_inverse_turns,
        ("wavelength", "turns", "inverse", "l/λ", "λ/l", "ratio", "r_ℓ", "inverted"),
    ),
    Heldout(
        "check_llama3_frequencies",
        "ramp from beta to alpha",
        b27_llama3_ramp_reversed,
        ("swap", "reversed", "ramp direction", "alpha and beta", "low and high", "backwards", "wrong way"),
    ),
    Heldout(
        "check_llama3_frequencies",
        "fast pairs divided",
        b27_llama3_divides_fast,
        ("wrong part", "fast pairs", "slow pairs", "high-frequency", "low-frequency", "reversed", "swapped"),
    ),
    Heldout(
        "check_llama3_frequencies",
        "ramp not clamped",
        b27_llama3_no_clamp,
        ("clamp", "clip", "outside the ramp", "between 0 and 1", "[0, 1]", "beyond the ramp", "extrapolat"),
    ),
    # extended rows
    Heldout(
        "check_extended_rows",
        "interpolation at m L / L'",
        b27_rows_interpolate_to_L,
        ("rows - 1", "off by one", "off-by-one", "endpoint", "last row", "end of the table", "squeez"),
    ),
    Heldout(
        "check_extended_rows",
        '`or "copy"` always true',
        b27_rows_or_always_true,
        ("modulo", "period", "wrap", "every option", "always clip", "clipped instead", "repeat"),
    ),
    Heldout(
        "check_extended_rows",
        "nearest row instead of linear",
        b27_rows_nearest,
        ("linear", "nearest", "rounded", "rounding", "blend", "fraction", "weights of the two rows"),
    ),
    Heldout(
        "check_extended_rows",
        "copy with period L - 1",
        b27_rows_copy_period_minus_one,
        ("off by one", "off-by-one", "period", "modulo", "one row short", "l - 1 rows"),
    ),
    # unrotated outputs
    Heldout("check_unrotated_outputs", "in-place through a view", b27_unrotate_inplace_alias, _B27_IN_PLACE),
    Heldout(
        "check_unrotated_outputs",
        "row index instead of positions",
        b27_unrotate_own_positions,
        ("ignor", "given positions", "row index", "default positions", "positions argument", "0, 1, 2"),
    ),
    Heldout(
        "check_unrotated_outputs",
        "half layout",
        b27_unrotate_half_layout,
        ("layout", "half", "interleav", "pairing", "rotate_half"),
    ),
    Heldout(
        "check_unrotated_outputs",
        "base ignored",
        b27_unrotate_default_base,
        ("ignor", "default base", "base argument", "other base", "given base", "hard-cod"),
    ),
    # linear RoPE attention
    Heldout(
        "check_linear_rope_attention",
        "j < i: state read before the update",
        b27_linear_excludes_self,
        ("itself", "own key", "diagonal", "off by one", "off-by-one", "empty", "j < i", "one key late"),
    ),
    Heldout(
        "check_linear_rope_attention",
        "relu feature map",
        b27_linear_relu_feature,
        ("elu", "feature map", "φ", "phi", "relu"),
    ),
    Heldout(
        "check_linear_rope_attention",
        "phi(R q) instead of R phi(q)",
        b27_linear_rotate_then_phi,
        ("order", "before", "after", "φ(r", "rotate then", "feature map", "phi(r"),
    ),
    Heldout(
        "check_linear_rope_attention",
        "not causal",
        b27_linear_not_causal,
        ("future", "all keys", "running", "later keys", "prefix", "cumulative"),
    ),
    # decode positions
    Heldout(
        "check_decode_positions",
        "starts at cache_len + 1",
        b27_decode_one_late,
        ("off by one", "off-by-one", "one too", "one late", "+ 1", "start"),
    ),
    Heldout(
        "check_decode_positions",
        "starts at cache_len - 1",
        b27_decode_one_early,
        ("off by one", "off-by-one", "one too", "one early", "last cached", "start", "repeat"),
    ),
    Heldout(
        "check_decode_positions",
        "range(cache_len, num_new)",
        b27_decode_range_end,
        (
            "empty",
            "stop",
            "cache_len + num_new",
            "too few",
            "number of positions",
            "upper bound",
            "end of the range",
            "range end",
        ),
    ),
    Heldout(
        "check_decode_positions",
        "linspace spacing",
        b27_decode_linspace,
        ("step", "spacing", "consecutive", "linspace", "integer", "non-integer", "apart"),
    ),
    # StreamingLLM
    Heldout(
        "check_streaming_cache",
        "rotated forward",
        b27_stream_wrong_direction,
        ("sign", "direction", "forward", "wrong way", "-δ", "backwards", "opposite"),
    ),
    Heldout(
        "check_streaming_cache",
        "shift n - w - 3",
        b27_stream_shift_off_by_one,
        ("off by one", "off-by-one", "shift", "n - w - 4", "one position", "by one"),
    ),
    Heldout(
        "check_streaming_cache",
        "four sinks hard-coded",
        b27_stream_four_sinks,
        ("ignor", "hard-cod", "hardcod", "sinks argument", "number of sinks", "4 sinks", "other sink"),
    ),
    Heldout(
        "check_streaming_cache",
        "sinks rotated too",
        b27_stream_rotates_sinks,
        (
            "sink keys",
            "sinks rotated",
            "rotated the sinks",
            "first tokens",
            "unchanged",
            "not be rotated",
            "should stay",
            "only the window",
        ),
    ),
    Heldout(
        "check_streaming_cache",
        "axis 1 as the token axis",
        b27_stream_axis_one,
        ("axis", "batch", "leading", "dim=-2", "unbatched", "token axis"),
    ),
    # 2-D blocks
    Heldout(
        "check_rope_matrix_2d_blocks",
        "ladder b^(-2l/d)",
        b27_blocks_2l_over_d,
        ("4ℓ/d", "4l/d", "exponent", "frequenc", "ladder", "2ℓ/d"),
    ),
    Heldout(
        "check_rope_matrix_2d_blocks",
        "transposed matrix",
        b27_blocks_transposed,
        ("transpos", "sign", "direction", "clockwise", "r^t", "inverse", "-sin"),
    ),
    Heldout(
        "check_rope_matrix_2d_blocks",
        "column pair first",
        b27_blocks_column_first,
        ("swap", "column first", "order", "first pair", "row and column", "rows and columns"),
    ),
    Heldout(
        "check_rope_matrix_2d_blocks",
        "axial halves",
        b27_blocks_axial,
        ("block", "axial", "layout", "halves", "permut", "4ℓ, 4ℓ+1"),
    ),
    # slowest wavelength
    Heldout(
        "check_slowest_wavelength",
        "exponent (d/2 - 1)/d",
        b27_wavelength_l_over_d,
        ("exponent", "2ℓ/d", "2l/d", "factor of 2", "square root", "sqrt"),
    ),
    Heldout("check_slowest_wavelength", "in degrees", b27_wavelength_degrees, ("degree", "360", "radian", "units")),
    Heldout(
        "check_slowest_wavelength",
        "operator precedence",
        b27_wavelength_precedence,
        ("precedence", "parenthes", "exponent", "bracket"),
    ),
    Heldout(
        "check_slowest_wavelength",
        "dim read as the number of pairs",
        b27_wavelength_dim_as_pairs,
        ("number of pairs", "pairs, not", "exponent", "1 - 1/d", "d/2 pairs"),
    ),
    # expected score
    Heldout(
        "check_expected_score",
        "sine coefficient C12 - C21",
        b27_expected_sine_sign,
        ("sign", "transpos", "c^t", "c_12", "c_21", "c12", "c21", "skew", "sine term", "sine coefficient"),
    ),
    Heldout(
        "check_expected_score",
        "ladder of d/2",
        b27_expected_pairs_ladder,
        ("d/2", "number of pairs", "frequenc", "2ℓ/d", "exponent", "ladder", "width"),
    ),
    Heldout(
        "check_expected_score",
        "trace term only",
        b27_expected_trace_only,
        (
            "sine term",
            "sine part",
            "sin term",
            "antisymmetric",
            "skew",
            "odd part",
            "c_21 - c_12",
            "c21 - c12",
            "cross term",
            "imaginary",
        ),
    ),
    Heldout(
        "check_expected_score",
        "mean over the pairs",
        b27_expected_mean_over_pairs,
        ("sum", "mean", "average", "normalis", "normaliz", "d/2", "divided by"),
    ),
    # score asymmetry
    Heldout(
        "check_score_asymmetry",
        "s(δ) + s(-δ)",
        b27_asymmetry_sum,
        ("sum instead", "s(δ) + s(-δ)", "even part", "symmetric part", "plus", "added"),
    ),
    Heldout(
        "check_score_asymmetry",
        "conjugate on the key",
        b27_asymmetry_conjugate_key,
        ("sign", "conjugat", "negat", "s(-δ) - s(δ)", "opposite", "reversed"),
    ),
    Heldout(
        "check_score_asymmetry",
        "half-layout pairs",
        b27_asymmetry_half_pairs,
        ("layout", "half", "interleav", "pairing", "pairs ("),
    ),
    Heldout(
        "check_score_asymmetry",
        "factor 2 missing",
        b27_asymmetry_missing_two,
        ("factor of 2", "factor 2", "twice", "half the", "missing 2", "-2 σ", "-2σ", "-2 sum", "2 ×"),
    ),
    # positional head
    Heldout(
        "check_positional_head_query",
        "R_{-target} k",
        b27_head_query_minus_target,
        ("sign", "direction", "-target", "opposite", "mirror", "negat"),
    ),
    Heldout(
        "check_positional_head_query",
        "base ignored",
        b27_head_query_default_base,
        ("ignor", "default base", "base argument", "other base", "given base"),
    ),
    Heldout(
        "check_positional_head_query",
        "half layout",
        b27_head_query_half_layout,
        ("layout", "half", "interleav", "pairing"),
    ),
    Heldout(
        "check_positional_head_query",
        "target + 1",
        b27_head_query_target_plus_one,
        ("off by one", "off-by-one", "one too", "target + 1", "one place", "by one"),
    ),
    # PI
    Heldout(
        "check_pi_frequencies",
        "one frequency per coordinate",
        b27_pi_one_per_coordinate,
        ("one per pair", "too many", "number of frequencies", "per coordinate", "twice as many", "d frequencies"),
    ),
    Heldout(
        "check_pi_frequencies",
        "only the slow half divided",
        b27_pi_slow_half_only,
        ("every pair", "all pairs", "every frequency", "each frequency", "only some", "uniform", "all frequencies"),
    ),
    Heldout(
        "check_pi_frequencies",
        "factor in the exponent",
        b27_pi_factor_in_exponent,
        ("exponent", "divide the frequencies", "1/s", "θ/s", "theta/s", "frequencies divided", "power"),
    ),
    # NTK
    Heldout(
        "check_ntk_frequencies",
        "s^(-l/(d-2)) per pair",
        b27_ntk_per_pair_missing_two,
        ("exponent", "2ℓ/(d-2)", "2l/(d-2)", "factor of 2", "slowest pair", "by s", "sqrt"),
    ),
    Heldout(
        "check_ntk_frequencies",
        "d // (d - 2)",
        b27_ntk_integer_division,
        ("integer division", "//", "truncat", "floor division", "exponent 1", "without the exponent"),
    ),
    Heldout(
        "check_ntk_frequencies",
        "ladder l/d",
        b27_ntk_l_over_d,
        ("exponent", "2ℓ/d", "2l/d", "factor of 2", "ℓ/d", "l/d"),
    ),
    # dynamic NTK
    Heldout(
        "check_dynamic_ntk_frequencies",
        "- s - 1 for - (s - 1)",
        b27_dynamic_minus_s_minus_one,
        ("sign", "parenthes", "bracket", "- s - 1", "-s-1", "s + 1"),
    ),
    Heldout(
        "check_dynamic_ntk_frequencies",
        "seq_len - 1",
        b27_dynamic_seq_len_minus_one,
        ("off by one", "off-by-one", "seq_len - 1", "one token", "one position", "by one"),
    ),
    Heldout(
        "check_dynamic_ntk_frequencies",
        "static factor above L",
        b27_dynamic_static_above,
        ("ignor", "static", "current length", "grows", "does not change with", "constant"),
    ),
    Heldout(
        "check_dynamic_ntk_frequencies",
        "max with s L",
        b27_dynamic_threshold_sL,
        ("threshold", "below", "s l", "s·l", "training length", "too late", "starts"),
    ),
]



# Batch 28 (issue 32, sixth pass): written on 2026-11-29 at about 07:53-07:58 UTC by a separate session from the
# exercises, their solutions and each checker's signature and first docstring line only, after every change of batch
# 27's pass; measured once at 07:59 UTC. Its README lists twelve entries that coincide with mistakes it glimpsed (the
# helper names of this file, batch 3's format, the issue's text): they count, but not as blind evidence. Its entry for
# ALiBi's symmetric -m|j - i| as the causal bias is left out: it is correct on every entry the exercise defines.

def _b28_f64_pairs(dim):
    return torch.arange(0, dim, 2, dtype=torch.float64) / dim


# ---------------------------------------------------------------- PI
def b28_pi_frequencies_half_index(dim, base, factor):
    # exponent l/d instead of 2l/d
    return base ** (-torch.arange(dim // 2, dtype=torch.float64) / dim) / factor


def b28_pi_frequencies_factor_into_base(dim, base, factor):
    # the factor multiplies the base (an NTK-like rule), not every frequency
    return (base * factor) ** -_b28_f64_pairs(dim)


# ---------------------------------------------------------------- NTK
def b28_ntk_frequencies_exponent_inverted(dim, base, factor):
    new_base = base * factor ** ((dim - 2) / dim)
    return new_base ** -_b28_f64_pairs(dim)


def b28_ntk_frequencies_also_divided(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    return new_base ** -_b28_f64_pairs(dim) / factor


def b28_ntk_frequencies_index_from_one(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    exponents = torch.arange(1, dim // 2 + 1, dtype=torch.float64) * 2 / dim
    return new_base ** -exponents


# ---------------------------------------------------------------- dynamic NTK
def b28_dynamic_ntk_frequencies_ratio_only(dim, base, factor, original_max_position, seq_len):
    length = max(seq_len, original_max_position)
    scale = length / original_max_position  # factor ignored
    return (base * scale ** (dim / (dim - 2))) ** -_b28_f64_pairs(dim)


def b28_dynamic_ntk_frequencies_no_max(dim, base, factor, original_max_position, seq_len):
    scale = factor * seq_len / original_max_position - (factor - 1)
    return (base * scale ** (dim / (dim - 2))) ** -_b28_f64_pairs(dim)


def b28_dynamic_ntk_frequencies_bracket_sign(dim, base, factor, original_max_position, seq_len):
    length = max(seq_len, original_max_position)
    scale = factor * length / original_max_position - factor - 1  # -(s - 1) expanded with the wrong sign
    return (base * scale ** (dim / (dim - 2))) ** -_b28_f64_pairs(dim)


# ---------------------------------------------------------------- YaRN
def _b28_yarn_reference(dim, base, factor, original_max_position, beta_fast, beta_slow, *, swap=False,
                    unrounded=False):
    theta_all = base ** -_b28_f64_pairs(dim)

    def pair_at(turns):
        return dim * math.log(original_max_position / (2 * math.pi * turns)) / (2 * math.log(base))

    fast, slow = (beta_slow, beta_fast) if swap else (beta_fast, beta_slow)
    if unrounded:
        low, high = max(pair_at(fast), 0), min(pair_at(slow), dim - 1)
    else:
        low, high = max(math.floor(pair_at(fast)), 0), min(math.ceil(pair_at(slow)), dim - 1)
    high += 0.001 if low == high else 0
    pairs = torch.arange(dim // 2, dtype=torch.float64)
    ramp = ((pairs - low) / (high - low)).clamp(0, 1)
    return theta_all * (1 - ramp) + theta_all / factor * ramp


def b28_yarn_frequencies_betas_swapped(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b28_yarn_reference(dim, base, factor, original_max_position, beta_fast, beta_slow, swap=True)


def b28_yarn_frequencies_bounds_not_rounded(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b28_yarn_reference(dim, base, factor, original_max_position, beta_fast, beta_slow, unrounded=True)


def b28_yarn_frequencies_ramp_in_turns(dim, base, factor, original_max_position, beta_fast, beta_slow):
    # the paper's ramp linear in r = L / lambda, not the code's ramp in the pair index
    theta = rope_frequencies(dim, base).double()
    turns = original_max_position * theta / (2 * math.pi)
    kept = ((turns - beta_slow) / (beta_fast - beta_slow)).clamp(0, 1)
    return kept * theta + (1 - kept) * theta / factor


# ---------------------------------------------------------------- llama3 / by_parts
def b28_llama3_frequencies_turns_without_two_pi(dim, base, factor, train_len, alpha, beta):
    theta = rope_frequencies(dim, base).double()
    turns = train_len * theta  # radians, not turns
    kept = ((turns - alpha) / (beta - alpha)).clamp(0, 1)
    return (1 - kept) * theta / factor + kept * theta


def b28_llama3_frequencies_blend_swapped(dim, base, factor, train_len, alpha, beta):
    theta = rope_frequencies(dim, base).double()
    kept = ((train_len * theta / (2 * math.pi) - alpha) / (beta - alpha)).clamp(0, 1)
    return kept * theta / factor + (1 - kept) * theta


def b28_llama3_frequencies_ramp_unclamped(dim, base, factor, train_len, alpha, beta):
    theta = rope_frequencies(dim, base).double()
    kept = (train_len * theta / (2 * math.pi) - alpha) / (beta - alpha)
    return (1 - kept) * theta / factor + kept * theta


# ---------------------------------------------------------------- cross-attention
def _b28_softmax_attend(q, k, v, scale):
    return torch.softmax(q @ k.T / scale, dim=-1) @ v


def b28_cross_attention_model_width_scale(y, z, w_q, w_k, w_v):
    return _b28_softmax_attend(y @ w_q, z @ w_k, z @ w_v, math.sqrt(y.shape[-1]))


def b28_cross_attention_roles_swapped(y, z, w_q, w_k, w_v):
    return _b28_softmax_attend(z @ w_q, y @ w_k, y @ w_v, math.sqrt(w_q.shape[-1]))


def b28_cross_attention_no_value_projection(y, z, w_q, w_k, w_v):
    return _b28_softmax_attend(y @ w_q, z @ w_k, z, math.sqrt(w_q.shape[-1]))


# ---------------------------------------------------------------- attention
def b28_attention_mask_fill_zero(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def b28_attention_scale_by_d(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def b28_attention_mask_inverted(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))  # True read as "hide"
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


# ---------------------------------------------------------------- position recovery
def b28_position_recovery_no_minus_one(outputs):
    return (1.0 / outputs.double()).round()


def b28_position_recovery_truncated(outputs):
    return (1.0 / outputs.double() - 1.0).long().double()


# ---------------------------------------------------------------- parameter counts
def b28_position_parameter_counts_bias(positions, width):
    return positions * width, positions * width + width, 3 * positions * width


def b28_position_parameter_counts_one_projection(positions, width):
    return positions * width, positions * width, positions * width


# ---------------------------------------------------------------- decayed rows
def b28_decayed_rows_no_lr(initial, lr, weight_decay, steps):
    return initial * (1 - weight_decay) ** steps


def b28_decayed_rows_linearised(initial, lr, weight_decay, steps):
    # first-order expansion of the compound decay
    return initial * (1 - steps * lr * weight_decay)


def b28_decayed_rows_float16(initial, lr, weight_decay, steps):
    # rows kept in half precision, as a mixed-precision model stores them
    return (initial.half() * (1 - lr * weight_decay) ** steps).to(initial.dtype)


# ---------------------------------------------------------------- padded positions
def b28_padded_positions_pads_not_reset(input_ids, padding_idx=1):
    is_token = (input_ids != padding_idx).long()
    return torch.cumsum(is_token, dim=-1) + padding_idx


def b28_padded_positions_hardcoded_pad(input_ids, padding_idx=1):
    is_token = (input_ids != 1).long()
    return torch.cumsum(is_token, dim=-1) * is_token + 1


def b28_padded_positions_arange(input_ids, padding_idx=1):
    positions = torch.arange(input_ids.shape[-1]).expand_as(input_ids) + padding_idx + 1
    return torch.where(input_ids == padding_idx, torch.full_like(positions, padding_idx), positions)


# ---------------------------------------------------------------- sinusoidal
def b28_sinusoidal_sin_cos_swapped(seq_len, dim, base=10000.0):
    angle = torch.arange(seq_len, dtype=torch.float64)[:, None] / base ** _b28_f64_pairs(dim)
    encoding = torch.empty(seq_len, dim, dtype=torch.float64)
    encoding[:, 0::2] = torch.cos(angle)
    encoding[:, 1::2] = torch.sin(angle)
    return encoding.float()


def b28_sinusoidal_exponent_half(seq_len, dim, base=10000.0):
    exponent = torch.arange(dim // 2, dtype=torch.float64) / dim
    angle = torch.arange(seq_len, dtype=torch.float64)[:, None] / base ** exponent
    return torch.stack((angle.sin(), angle.cos()), dim=-1).flatten(-2).float()


def b28_sinusoidal_float16(seq_len, dim, base=10000.0):
    position = torch.arange(seq_len, dtype=torch.float16)[:, None]
    angle = position / torch.tensor(base ** _b28_f64_pairs(dim).numpy(), dtype=torch.float16)
    return torch.stack((angle.sin(), angle.cos()), dim=-1).flatten(-2).float()


def b28_sinusoidal_base_ignored(seq_len, dim, base=10000.0):
    position = np.arange(seq_len)[:, None]
    angle = position / 10000.0 ** (np.arange(0, dim, 2) / dim)
    table = np.zeros((seq_len, dim))
    table[:, 0::2], table[:, 1::2] = np.sin(angle), np.cos(angle)
    return torch.from_numpy(table).float()


# ---------------------------------------------------------------- concatenated sinusoidal
def b28_concatenated_sinusoidal_over_half(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / half)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), dim=-1)


def b28_concatenated_sinusoidal_interleaved(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)


def b28_concatenated_sinusoidal_cos_first(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.cos(), angles.sin()), dim=-1)


# ---------------------------------------------------------------- T5 buckets
def _b28_t5(relative_position, bidirectional, num_buckets, max_distance, *, future_sign=1, causal_sign=-1,
        cap=True):
    offsets = torch.as_tensor(relative_position).long()
    n_b = num_buckets // 2 if bidirectional else num_buckets
    first = torch.where(future_sign * offsets > 0, n_b, 0) if bidirectional else 0
    rho = offsets.abs() if bidirectional else (causal_sign * offsets).clamp(min=0)
    e = n_b // 2
    log_part = torch.log(rho.clamp(min=1).float() / e) / math.log(max_distance / e) * (n_b - e)
    far = e + log_part.long()
    if cap:
        far = far.clamp(max=n_b - 1)
    return first + torch.where(rho < e, rho, far)


def b28_t5_bucket_direction_flipped(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _b28_t5(relative_position, bidirectional, num_buckets, max_distance, future_sign=-1)


def b28_t5_bucket_causal_keeps_future(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _b28_t5(relative_position, bidirectional, num_buckets, max_distance, causal_sign=1)


def b28_t5_bucket_no_cap(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _b28_t5(relative_position, bidirectional, num_buckets, max_distance, cap=False)


def b28_t5_bucket_hardcoded_buckets(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _b28_t5(relative_position, bidirectional, 32, max_distance)


# ---------------------------------------------------------------- ALiBi from slopes
def b28_alibi_bias_from_slopes_transposed(slopes, length):
    return slopes[:, None, None] * relative_positions(length).T.float()



def b28_alibi_bias_from_slopes_recomputed(slopes, length):
    own = alibi_slopes(len(slopes)).to(torch.float32)
    return own[:, None, None] * relative_positions(length).float()


# ---------------------------------------------------------------- ALiBi at positions
def b28_alibi_bias_at_positions_indices(slopes, positions):
    index = torch.arange(len(positions))
    return -slopes[:, None, None] * (index[None, :] - index[:, None]).abs()


def b28_alibi_bias_at_positions_no_minus(slopes, positions):
    return slopes[:, None, None] * (positions[None, :] - positions[:, None]).abs()


def b28_alibi_bias_at_positions_squared(slopes, positions):
    return -slopes[:, None, None] * (positions[None, :] - positions[:, None]) ** 2


# ---------------------------------------------------------------- ALiBi slopes
def b28_alibi_slopes_power_rule_everywhere(num_heads):
    return torch.tensor([2.0 ** (-8.0 * (i + 1) / num_heads) for i in range(num_heads)])


def b28_alibi_slopes_from_zero(num_heads):
    closest = 2 ** math.floor(math.log2(num_heads))

    def powers(n):
        return [2.0 ** (-8.0 * i / n) for i in range(n)]  # starts at 1

    slopes = powers(closest)
    if closest < num_heads:
        slopes += powers(2 * closest)[0::2][: num_heads - closest]
    return torch.tensor(slopes)


# ---------------------------------------------------------------- apply_rope
def _b28_pairs_rope(x, positions, base, *, sign=1.0, angle_dtype=torch.float64):
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    theta = (base ** -_b28_f64_pairs(dim)).to(angle_dtype)
    angles = positions.to(angle_dtype)[:, None] * theta
    cos, sin = angles.cos().to(x.dtype), (sign * angles.sin()).to(x.dtype)
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), -1).flatten(-2)


def b28_apply_rope_mirrored(x, positions=None, base=10000.0):
    return _b28_pairs_rope(x, positions, base, sign=-1.0)


def b28_apply_rope_half_layout(x, positions=None, base=10000.0):
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    angles = positions.double()[:, None] * (base ** -_b28_f64_pairs(dim))
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    a, b = x.chunk(2, dim=-1)
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)


def b28_apply_rope_positions_ignored(x, positions=None, base=10000.0):
    return _b28_pairs_rope(x, None, base)


def b28_apply_rope_float32_angles(x, positions=None, base=10000.0):
    return _b28_pairs_rope(x, positions, base, angle_dtype=torch.float32)


def b28_apply_rope_complex_base_ignored(x, positions=None, base=10000.0):
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    pairs = torch.view_as_complex(x.double().reshape(*x.shape[:-1], dim // 2, 2).contiguous())
    angles = positions.double()[:, None] * rope_frequencies(dim).double()  # default base
    rotated = pairs * torch.polar(torch.ones_like(angles), angles)
    return torch.view_as_real(rotated).flatten(-2).to(x.dtype)


# ---------------------------------------------------------------- apply_rope_2d
def b28_apply_rope_2d_rows_twice(x, rows, columns, base=10000.0):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((apply_rope(first, rows, base=base), apply_rope(second, rows, base=base)), dim=-1)


def b28_apply_rope_2d_halves_swapped(x, rows, columns, base=10000.0):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((apply_rope(first, columns, base=base), apply_rope(second, rows, base=base)), dim=-1)


def b28_apply_rope_2d_interleaved_split(x, rows, columns, base=10000.0):
    out = torch.empty_like(x)
    out[..., 0::2] = apply_rope(x[..., 0::2], rows, base=base)
    out[..., 1::2] = apply_rope(x[..., 1::2], columns, base=base)
    return out


# ---------------------------------------------------------------- decode positions
def b28_decode_positions_one_late(cache_len, num_new):
    return torch.arange(cache_len + 1, cache_len + num_new + 1)


def b28_decode_positions_cache_ignored(cache_len, num_new):
    return torch.arange(num_new)


# ---------------------------------------------------------------- streaming cache
def b28_streaming_cache_wrong_direction(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    moved = apply_rope(cached[..., total - window:, :], torch.full((window,), shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b28_streaming_cache_sinks_forgotten(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window
    moved = apply_rope(cached[..., total - window:, :], torch.full((window,), -shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b28_streaming_cache_not_rotated(cached, window, sinks=4):
    return torch.cat((cached[..., :sinks, :], cached[..., -window:, :]), dim=-2)


# ---------------------------------------------------------------- 2-D RoPE blocks
def _b28_blocks(row, column, dim, base, *, sign=1.0, theta=None, swap=False):
    if theta is None:
        theta = base ** (-4 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    first, second = (column, row) if swap else (row, column)
    angles = torch.stack((first * theta, second * theta), dim=-1).flatten()
    return torch.block_diag(*[torch.tensor([[math.cos(a), -sign * math.sin(a)], [sign * math.sin(a), math.cos(a)]],
                                           dtype=torch.float64) for a in angles.tolist()])


def b28_rope_matrix_2d_blocks_transposed(row, column, dim, base=10000.0):
    return _b28_blocks(row, column, dim, base, sign=-1.0)


def b28_rope_matrix_2d_blocks_one_d_frequencies(row, column, dim, base=10000.0):
    theta = base ** (-2 * torch.arange(dim // 4, dtype=torch.float64) / dim)
    return _b28_blocks(row, column, dim, base, theta=theta)


def b28_rope_matrix_2d_blocks_row_column_swapped(row, column, dim, base=10000.0):
    return _b28_blocks(row, column, dim, base, swap=True)


# ---------------------------------------------------------------- unrotated outputs
def b28_unrotated_outputs_forward(outputs, positions, base=10000.0):
    return apply_rope(outputs, positions, base=base)


def b28_unrotated_outputs_default_positions(outputs, positions, base=10000.0):
    return apply_rope(outputs, -torch.arange(outputs.shape[-2]), base=base)


def b28_unrotated_outputs_half_layout(outputs, positions, base=10000.0):
    return apply_rope(outputs, -positions, base=base, layout="half")


# ---------------------------------------------------------------- linear attention with RoPE
def _b28_linear(q, k, v, base, *, rotated_normaliser=False, causal=True, include_self=True, feature=True):
    if feature:
        phi_q, phi_k = (torch.nn.functional.elu(x) + 1 for x in (q, k))
    else:
        phi_q, phi_k = q, k
    rot_q, rot_k = apply_rope(phi_q, base=base), apply_rope(phi_k, base=base)
    norm_k = rot_k if rotated_normaliser else phi_k
    norm_q = rot_q if rotated_normaliser else phi_q
    n = q.shape[0]
    outputs = []
    for i in range(n):
        stop = (i + 1 if include_self else i) if causal else n
        state = rot_k[:stop].T @ v[:stop]
        normaliser = norm_k[:stop].sum(0)
        outputs.append(rot_q[i] @ state / (norm_q[i] @ normaliser))
    return torch.stack(outputs)


def b28_linear_rope_attention_rotated_normaliser(q, k, v, base=10000.0):
    return _b28_linear(q, k, v, base, rotated_normaliser=True)


def b28_linear_rope_attention_not_causal(q, k, v, base=10000.0):
    return _b28_linear(q, k, v, base, causal=False)


def b28_linear_rope_attention_excludes_self(q, k, v, base=10000.0):
    return _b28_linear(q, k, v, base, include_self=False)


def b28_linear_rope_attention_no_feature_map(q, k, v, base=10000.0):
    return _b28_linear(q, k, v, base, feature=False)


# ---------------------------------------------------------------- relative shift
def b28_relative_shift_pad_right(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (0, 1))
    rows = padded.reshape(*batch, k_len + 1, q_len)[..., 1:, :]
    return rows.reshape(*batch, q_len, k_len)


def b28_relative_shift_drop_last_row(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    rows = padded.reshape(*batch, k_len + 1, q_len)[..., :-1, :]
    return rows.reshape(*batch, q_len, k_len)


# ---------------------------------------------------------------- repeat_kv
def b28_repeat_kv_tiled(kv, num_heads):
    reps = [1] * kv.dim()
    reps[-3] = num_heads // kv.shape[-3]
    return kv.repeat(*reps)


def b28_repeat_kv_sequence_axis(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=-2)


def b28_repeat_kv_too_many(kv, num_heads):
    return kv.repeat_interleave(num_heads, dim=-3)


# ---------------------------------------------------------------- reversal gap
def b28_reversal_gap_feature_axis(layer, x):
    return (layer(x.flip(-1)) - layer(x).flip(-1)).abs().max()


def b28_reversal_gap_output_not_reversed(layer, x):
    return (layer(x.flip(0)) - layer(x)).abs().max()


def b28_reversal_gap_mean(layer, x):
    return (layer(x.flip(-2)) - layer(x).flip(-2)).abs().mean()


# ---------------------------------------------------------------- score asymmetry
def _b28_score(query, key, offsets, base, *, conj=True):
    theta = rope_frequencies(query.shape[-1], base).double()
    angles = offsets.double()[:, None] * theta
    qc, kc = complex_pairs(query.double()), complex_pairs(key.double())
    eta = (qc.conj() if conj else qc) * kc
    return lambda sign: (eta * torch.exp(sign * 1j * angles)).sum(-1).real


def b28_score_asymmetry_reversed(query, key, offsets, base=10000.0):
    s = _b28_score(query, key, offsets, base)
    return s(-1) - s(1)


def b28_score_asymmetry_no_conjugate(query, key, offsets, base=10000.0):
    s = _b28_score(query, key, offsets, base, conj=False)
    return s(1) - s(-1)


def b28_score_asymmetry_default_base(query, key, offsets, base=10000.0):
    s = _b28_score(query, key, offsets, 10000.0)
    return s(1) - s(-1)


# ---------------------------------------------------------------- Shaw index
def b28_shaw_index_shift_then_clip(q_len, k_len, max_distance, query_offset=0):
    queries = query_offset + torch.arange(q_len)
    offsets = torch.arange(k_len)[None, :] - queries[:, None]
    return (offsets + max_distance).clamp(-max_distance, max_distance)


def b28_shaw_index_i_minus_j(q_len, k_len, max_distance, query_offset=0):
    queries = query_offset + torch.arange(q_len)
    offsets = queries[:, None] - torch.arange(k_len)[None, :]
    return offsets.clamp(-max_distance, max_distance) + max_distance


def b28_shaw_index_offset_ignored(q_len, k_len, max_distance, query_offset=0):
    offsets = torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
    return offsets.clamp(-max_distance, max_distance) + max_distance


# ---------------------------------------------------------------- slowest wavelength
def b28_slowest_wavelength_no_two_pi(dim, base):
    return base ** (1 - 2 / dim)


def b28_slowest_wavelength_exponent_one_over_d(dim, base):
    return 2 * math.pi * base ** (1 - 1 / dim)


# ---------------------------------------------------------------- expected score
def b28_expected_score_sin_sign(cross, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(2 * len(cross), base).double()
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1])
            + angles.sin() * (cross[:, 0, 1] - cross[:, 1, 0])).sum(-1)


def b28_expected_score_no_sin_term(cross, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(2 * len(cross), base).double()
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1])).sum(-1)


def b28_expected_score_exponent_half(cross, offsets, base=10000.0):
    pairs = len(cross)
    theta = base ** (-torch.arange(pairs, dtype=torch.float64) / (2 * pairs))  # l/d, the 2 forgotten
    angles = offsets.double()[:, None] * theta
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1])
            + angles.sin() * (cross[:, 1, 0] - cross[:, 0, 1])).sum(-1)


# ---------------------------------------------------------------- positional head query
def b28_positional_head_query_minus_target(key, target, base=10000.0):
    return apply_rope(key[None], torch.tensor([-target]), base=base)[0]


def b28_positional_head_query_target_ignored(key, target, base=10000.0):
    return key.clone()


def b28_positional_head_query_default_base(key, target, base=10000.0):
    return apply_rope(key[None], torch.tensor([target]))[0]


# ---------------------------------------------------------------- extended rows
def _b28_rows(table, length, option, *, clip_max=None, stretch=False):
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1 if clip_max is None else clip_max)]
    if option == "copy":
        return table[torch.arange(length) % rows]
    where = torch.arange(length) * rows / length if stretch else torch.linspace(0, rows - 1, length)
    low = where.floor().long().clamp(max=rows - 2)
    fraction = (where - low)[:, None]
    return (1 - fraction) * table[low] + fraction * table[(low + 1).clamp(max=rows - 1)]


def b28_extended_rows_interpolate_endpoint(table, length, option):
    return _b28_rows(table, length, option, stretch=True)


def b28_extended_rows_clip_one_short(table, length, option):
    return _b28_rows(table, length, option, clip_max=table.shape[0] - 2)


def b28_extended_rows_option_ignored(table, length, option):
    return _b28_rows(table, length, "clip")


HELDOUT_BATCH_28 = [
    Heldout("check_pi_frequencies", "exponent l/d (2 missing)", b28_pi_frequencies_half_index,
            ("exponent", "2l/d", "factor of 2", "twice", "l/d")),
    Heldout("check_pi_frequencies", "factor multiplies the base", b28_pi_frequencies_factor_into_base,
            ('ntk', 'uniform', 'every pair', 'every frequency', 'same factor', 'not divided')),
    Heldout("check_ntk_frequencies", "exponent (d-2)/d", b28_ntk_frequencies_exponent_inverted,
            ("exponent", "d/(d-2)", "(d-2)/d", "invert")),
    Heldout("check_ntk_frequencies", "also divided by s", b28_ntk_frequencies_also_divided,
            ('also divid', 'position interpolation', 'pair 0', 'fastest', 'unchanged', 'pi and ntk')),
    Heldout("check_ntk_frequencies", "pair index from 1", b28_ntk_frequencies_index_from_one,
            ("off by one", "pair 0", "index", "start", "shift")),
    Heldout("check_dynamic_ntk_frequencies", "factor ignored", b28_dynamic_ntk_frequencies_ratio_only,
            ('ignore', 'unused', 'not used', 'without the factor', 's_n')),
    Heldout("check_dynamic_ntk_frequencies", "no max with L", b28_dynamic_ntk_frequencies_no_max,
            ("max", "below", "shorter", "original", "clamp", "< 1")),
    Heldout("check_dynamic_ntk_frequencies", "-(s-1) expanded as -s-1", b28_dynamic_ntk_frequencies_bracket_sign,
            ('s - 1', '(s-1)', 'bracket', 'sign', 's_n')),
    Heldout("check_yarn_frequencies", "beta_fast and beta_slow swapped", b28_yarn_frequencies_betas_swapped,
            ("swap", "beta_fast", "beta_slow", "β_fast", "β_slow", "revers", "invert")),
    Heldout("check_yarn_frequencies", "ramp bounds not rounded", b28_yarn_frequencies_bounds_not_rounded,
            ("floor", "ceil", "round", "integer")),
    Heldout("check_yarn_frequencies", "ramp linear in turns", b28_yarn_frequencies_ramp_in_turns,
            ("pair index", "index", "turns", "linear in", "paper")),
    Heldout("check_llama3_frequencies", "turns without 2π", b28_llama3_frequencies_turns_without_two_pi,
            ("2π", "2pi", "2 pi", "wavelength", "radian")),
    Heldout("check_llama3_frequencies", "blend swapped", b28_llama3_frequencies_blend_swapped,
            ("swap", "invert", "revers", "other way", "kept")),
    Heldout("check_llama3_frequencies", "ramp not clamped", b28_llama3_frequencies_ramp_unclamped,
            ("clamp", "between 0 and 1", "[0, 1]", "outside", "clip")),
    Heldout("check_cross_attention", "scaled by the model width", b28_cross_attention_model_width_scale,
            ("scale", "sqrt", "√", "head width", "model width", "d_h")),
    Heldout("check_cross_attention", "queries from the memory", b28_cross_attention_roles_swapped,
            ('swap', 'queries from', 'roles', 'y and z')),
    Heldout("check_cross_attention", "value projection skipped", b28_cross_attention_no_value_projection,
            ('value projection', 'not applied', 'without w_v', 'skipped')),
    Heldout("check_attention", "masked scores set to 0", b28_attention_mask_fill_zero,
            ('fill', '-inf', '−inf', 'zero', '0 instead')),
    Heldout("check_attention", "divided by d, not sqrt(d)", b28_attention_scale_by_d,
            ("sqrt", "√", "scale", "temperature")),
    Heldout("check_attention", "mask meaning inverted", b28_attention_mask_inverted,
            ("invert", "true means", "convention", "opposite", "~mask", "hides")),
    Heldout("check_position_recovery", "1/o without -1", b28_position_recovery_no_minus_one,
            ("off by one", "- 1", "minus 1", "minus one", "one too")),
    Heldout("check_position_recovery", "truncated, not rounded", b28_position_recovery_truncated,
            ("round", "truncat", "floor", "nearest")),
    Heldout("check_position_parameter_counts", "bias counted in part 2", b28_position_parameter_counts_bias,
            ("bias",)),
    Heldout("check_position_parameter_counts", "one projection in part 3",
            b28_position_parameter_counts_one_projection, ("three", "3nd", "q, k and v", "each projection", "3 ×")),
    Heldout("check_decayed_rows", "lr left out", b28_decayed_rows_no_lr,
            ('learning rate', 'lr ·', 'lr·', 'without lr', 'ignore')),
    Heldout("check_decayed_rows", "linearised 1 - t·lr·wd", b28_decayed_rows_linearised,
            ("linear", "first-order", "first order", "approximat", "compound", "power")),
    Heldout("check_decayed_rows", "decay factor in float16", b28_decayed_rows_float16,
            ("float16", "half precision", "precision", "dtype", "rounding")),
    Heldout("check_padded_positions", "pads keep counting", b28_padded_positions_pads_not_reset,
            ("padding position", "pad", "padding_idx", "multiply", "mask")),
    Heldout("check_padded_positions", "padding_idx hard-coded to 1", b28_padded_positions_hardcoded_pad,
            ('ignore', 'hard-coded', 'hardcoded', 'unused', 'always 1')),
    Heldout("check_padded_positions", "arange, left padding wrong", b28_padded_positions_arange,
            ("left", "cumsum", "cumulative", "count")),
    Heldout("check_sinusoidal", "cos on even, sin on odd", b28_sinusoidal_sin_cos_swapped,
            ('swap', 'exchanged', 'cos first', 'cosine on the even', 'sin and cos')),
    Heldout("check_sinusoidal", "exponent i/d", b28_sinusoidal_exponent_half,
            ("exponent", "2i/d", "factor of 2", "frequenc")),
    Heldout("check_sinusoidal", "computed in float16", b28_sinusoidal_float16,
            ("float16", "half precision", "precision", "dtype")),
    Heldout("check_sinusoidal", "base hard-coded (numpy)", b28_sinusoidal_base_ignored,
            ('ignore', 'hard-coded', 'hardcoded', 'default base', 'unused')),
    Heldout("check_concatenated_sinusoidal", "exponent over d/2", b28_concatenated_sinusoidal_over_half,
            ("d/2 - 1", "half - 1", "denominator", "exponent", "last frequency")),
    Heldout("check_concatenated_sinusoidal", "interleaved", b28_concatenated_sinusoidal_interleaved,
            ("interleav", "concaten", "layout", "then all cosines", "sines first")),
    Heldout("check_concatenated_sinusoidal", "cosines first", b28_concatenated_sinusoidal_cos_first,
            ("swap", "cosines first", "order", "sines first")),
    Heldout("check_t5_bucket", "future/past halves flipped", b28_t5_bucket_direction_flipped,
            ("sign", "direction", "future", "past", "negative", "positive")),
    Heldout("check_t5_bucket", "causal keeps the future", b28_t5_bucket_causal_keeps_future,
            ("causal", "sign", "past", "future", "bidirectional=false", "unidirectional")),
    Heldout("check_t5_bucket", "last bucket not capped", b28_t5_bucket_no_cap,
            ("clamp", "cap", "last bucket", "max_distance", "beyond", "num_buckets - 1")),
    Heldout("check_t5_bucket", "num_buckets hard-coded", b28_t5_bucket_hardcoded_buckets,
            ('ignore', 'hard-coded', 'hardcoded', 'unused', 'always 32')),
    Heldout("check_alibi_bias_from_slopes", "i - j (transposed)", b28_alibi_bias_from_slopes_transposed,
            ("transpos", "sign", "i - j", "j - i")),
    Heldout("check_alibi_bias_from_slopes", "slopes recomputed", b28_alibi_bias_from_slopes_recomputed,
            ('ignore', 'recomput', 'given slopes', 'own slopes', 'unused', "alibi's rule")),
    Heldout("check_alibi_bias_at_positions", "indices, not positions", b28_alibi_bias_at_positions_indices,
            ('index', 'indices', 'ignore', 'real positions', 'not the positions')),
    Heldout("check_alibi_bias_at_positions", "minus sign missing", b28_alibi_bias_at_positions_no_minus,
            ("sign", "negative", "minus", "penal")),
    Heldout("check_alibi_bias_at_positions", "squared distance", b28_alibi_bias_at_positions_squared,
            ("square", "linear", "|p_j - p_i|", "absolute")),
    Heldout("check_alibi_slopes", "power-of-2 rule for every n", b28_alibi_slopes_power_rule_everywhere,
            ("power of 2", "power of two", "non-power", "interleav", "not a power")),
    Heldout("check_alibi_slopes", "first slope 1", b28_alibi_slopes_from_zero,
            ("off by one", "first slope", "start", "i + 1", "equal to 1")),
    Heldout("check_apply_rope", "rotation mirrored", b28_apply_rope_mirrored,
            ("sign", "direction", "clockwise", "mirror", "transpos", "inverse")),
    Heldout("check_apply_rope", "half layout", b28_apply_rope_half_layout,
            ("layout", "half", "interleav", "pairs")),
    Heldout("check_apply_rope", "positions ignored", b28_apply_rope_positions_ignored,
            ('ignore', 'unused', 'default positions', '0, 1, 2', 'arange')),
    Heldout("check_apply_rope", "angles in float32", b28_apply_rope_float32_angles,
            ("float32", "precision", "large position", "float64")),
    Heldout("check_apply_rope", "base ignored (complex)", b28_apply_rope_complex_base_ignored,
            ('ignore', 'hard-coded', 'hardcoded', 'default base', 'unused')),
    Heldout("check_apply_rope_2d", "rows for both halves", b28_apply_rope_2d_rows_twice,
            ('columns are ignored', 'ignore', 'rows for both', 'second half', 'unused')),
    Heldout("check_apply_rope_2d", "halves swapped", b28_apply_rope_2d_halves_swapped,
            ("swap", "first half", "rows and columns", "columns on")),
    Heldout("check_apply_rope_2d", "split even/odd, not halves", b28_apply_rope_2d_interleaved_split,
            ("halves", "chunk", "interleav", "split", "even", "odd")),
    Heldout("check_decode_positions", "starts one late", b28_decode_positions_one_late,
            ("off by one", "one late", "start", "cache_len + 1")),
    Heldout("check_decode_positions", "cache ignored", b28_decode_positions_cache_ignored,
            ('ignore', 'start at 0', 'restart', 'from 0', 'starts at zero', 'unused')),
    Heldout("check_streaming_cache", "rotated forward", b28_streaming_cache_wrong_direction,
            ("sign", "direction", "forward", "backward", "-shift")),
    Heldout("check_streaming_cache", "sinks left out of the shift", b28_streaming_cache_sinks_forgotten,
            ('sinks', 'too far', 'off by', 'too many places', 'forgot the sink')),
    Heldout("check_streaming_cache", "not rotated", b28_streaming_cache_not_rotated,
            ('not rotated', 'renumber', 'not moved', 'unchanged', 'no rotation', 'old positions')),
    Heldout("check_rope_matrix_2d_blocks", "blocks transposed", b28_rope_matrix_2d_blocks_transposed,
            ("transpos", "sign", "direction", "inverse")),
    Heldout("check_rope_matrix_2d_blocks", "1-D frequencies", b28_rope_matrix_2d_blocks_one_d_frequencies,
            ("exponent", "4l/d", "frequenc", "theta'", "θ'")),
    Heldout("check_rope_matrix_2d_blocks", "row and column swapped", b28_rope_matrix_2d_blocks_row_column_swapped,
            ('swap', 'exchanged', 'row and column', 'column and row')),
    Heldout("check_unrotated_outputs", "rotated forward", b28_unrotated_outputs_forward,
            ("sign", "direction", "transpos", "inverse", "forward", "-p")),
    Heldout("check_unrotated_outputs", "positions ignored", b28_unrotated_outputs_default_positions,
            ('ignore', 'unused', 'default positions', '0, 1, 2', 'arange')),
    Heldout("check_unrotated_outputs", "half layout", b28_unrotated_outputs_half_layout,
            ("layout", "half", "interleav")),
    Heldout("check_linear_rope_attention", "normaliser rotated", b28_linear_rope_attention_rotated_normaliser,
            ('normalis', 'normaliz', 'denominator')),
    Heldout("check_linear_rope_attention", "not causal", b28_linear_rope_attention_not_causal,
            ("causal", "future", "j <= i", "j ≤ i", "later keys")),
    Heldout("check_linear_rope_attention", "key i excluded", b28_linear_rope_attention_excludes_self,
            ("diagonal", "current key", "off by one", "itself", "j = i", "one key late", "empty")),
    Heldout("check_linear_rope_attention", "no feature map", b28_linear_rope_attention_no_feature_map,
            ("elu", "phi", "φ", "feature map", "positive")),
    Heldout("check_relative_shift", "padded on the right", b28_relative_shift_pad_right,
            ('left', 'right', 'side', 'pad on the')),
    Heldout("check_relative_shift", "last row dropped", b28_relative_shift_drop_last_row,
            ("first row", "drop", "slice", "last row")),
    Heldout("check_repeat_kv", "repeat (tiled)", b28_repeat_kv_tiled,
            ("repeat_interleave", "group", "tile", "order", "consecutive")),
    Heldout("check_repeat_kv", "repeated along the sequence", b28_repeat_kv_sequence_axis,
            ('axis', 'head axis', '-3', 'sequence')),
    Heldout("check_repeat_kv", "num_heads copies of each", b28_repeat_kv_too_many,
            ("num_heads //", "group size", "too many", "copies", "h_kv")),
    Heldout("check_reversal_gap", "flipped the features", b28_reversal_gap_feature_axis,
            ('axis', 'feature', 'sequence axis', 'last dimension')),
    Heldout("check_reversal_gap", "output not reversed back", b28_reversal_gap_output_not_reversed,
            ('not reversed', 'reverse the output', 'reverse layer(x)', 'un-revers', 'both sides')),
    Heldout("check_reversal_gap", "mean, not max", b28_reversal_gap_mean,
            ("mean", "max", "largest", "average")),
    Heldout("check_score_asymmetry", "s(-δ) - s(δ)", b28_score_asymmetry_reversed,
            ("sign", "order", "revers", "negat", "opposite")),
    Heldout("check_score_asymmetry", "no conjugate", b28_score_asymmetry_no_conjugate,
            ("conj", "conjugate")),
    Heldout("check_score_asymmetry", "base hard-coded", b28_score_asymmetry_default_base,
            ('ignore', 'hard-coded', 'hardcoded', 'default base', 'unused')),
    Heldout("check_shaw_index", "shift before clip", b28_shaw_index_shift_then_clip,
            ("clip before", "clip first", "order", "negative row", "shift")),
    Heldout("check_shaw_index", "i - j", b28_shaw_index_i_minus_j,
            ("sign", "transpos", "i - j", "j - i", "mirror")),
    Heldout("check_shaw_index", "query_offset ignored", b28_shaw_index_offset_ignored,
            ('ignore', 'unused', 'cached', 'not shifted', 'query_offset is')),
    Heldout("check_slowest_wavelength", "no 2π", b28_slowest_wavelength_no_two_pi,
            ("2π", "2pi", "2 pi", "radian", "period")),
    Heldout("check_slowest_wavelength", "exponent 1 - 1/d", b28_slowest_wavelength_exponent_one_over_d,
            ("exponent", "2/d", "1 - 2/d", "slowest pair")),
    Heldout("check_expected_score", "sin term sign", b28_expected_score_sin_sign,
            ("sign", "transpos", "orientation", "c_10 - c_01", "antisymmetric")),
    Heldout("check_expected_score", "sin term dropped", b28_expected_score_no_sin_term,
            ('sine term', 'sin term', 'antisymmetric', 'off-diagonal', 'c_10 - c_01')),
    Heldout("check_expected_score", "exponent l/d (2 missing)", b28_expected_score_exponent_half,
            ("exponent", "2l/d", "frequenc", "factor of 2")),
    Heldout("check_positional_head_query", "rotated by -target", b28_positional_head_query_minus_target,
            ("sign", "-target", "direction", "mirror", "−target")),
    Heldout("check_positional_head_query", "target ignored", b28_positional_head_query_target_ignored,
            ('ignore', 'peaks at 0', 'peaks at δ = 0', 'not rotated', 'unused', 'returns the key')),
    Heldout("check_positional_head_query", "base hard-coded", b28_positional_head_query_default_base,
            ('ignore', 'hard-coded', 'hardcoded', 'default base', 'unused')),
    Heldout("check_extended_rows", "interpolation misses the last row", b28_extended_rows_interpolate_endpoint,
            ("endpoint", "linspace", "l - 1", "last row", "end")),
    Heldout("check_extended_rows", "clip one row short", b28_extended_rows_clip_one_short,
            ("off by one", "last row", "l - 1", "one short")),
    Heldout("check_extended_rows", "option ignored", b28_extended_rows_option_ignored,
            ('ignore', 'always clip', 'unused', 'same rows for every', 'every option')),
]



# Batch 29 (issue 32, sixth pass): written on 2026-11-29 at about 08:02-08:13 UTC by a separate session from the
# exercises, their solutions and each checker's signature and first docstring line only, without opening this file or
# any earlier batch, after every change of batch 28's pass; measured once at 08:14 UTC.

def _b29_attention(q, k, v):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    return w @ v


# --- check_cross_attention -------------------------------------------------
def b29_cross_attention_scale_by_model_width(y, z, w_q, w_k, w_v):
    q, k, v = y @ w_q, z @ w_k, z @ w_v
    w = torch.softmax(q @ k.T / math.sqrt(y.shape[-1]), dim=-1)  # d, not d_h
    return w @ v


def b29_cross_attention_softmax_over_queries(y, z, w_q, w_k, w_v):
    q, k, v = y @ w_q, z @ w_k, z @ w_v
    w = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=0)
    return w @ v


def b29_cross_attention_roles_swapped(y, z, w_q, w_k, w_v):
    return _b29_attention(z @ w_q, y @ w_k, y @ w_v)


# --- check_attention -------------------------------------------------------
def b29_attention_mask_inverted(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def b29_attention_fill_zero(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def b29_attention_scale_by_d(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


# --- check_position_recovery -----------------------------------------------
def b29_position_recovery_floor(outputs):
    return (1.0 / outputs.double() - 1.0).floor()


def b29_position_recovery_no_minus_one(outputs):
    return (1.0 / outputs.double()).round()


# --- check_position_parameter_counts ---------------------------------------
def b29_parameter_counts_bias_in_map(positions, width):
    return positions * width, positions * width + width, 3 * positions * width


def b29_parameter_counts_one_projection(positions, width):
    return positions * width, positions * width, positions * width


# --- check_decayed_rows ----------------------------------------------------
def b29_decayed_rows_ignores_lr(initial, lr, weight_decay, steps):
    return initial * (1 - weight_decay) ** steps


def b29_decayed_rows_loop_off_by_one(initial, lr, weight_decay, steps):
    rows = initial.clone()
    for _ in range(1, steps):
        rows = rows * (1 - lr * weight_decay)
    return rows


def b29_decayed_rows_linear(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay * steps)


# --- check_padded_positions ------------------------------------------------
def b29_padded_positions_pads_not_reset(input_ids, padding_idx=1):
    mask = (input_ids != padding_idx).long()
    return mask.cumsum(-1) + padding_idx


def b29_padded_positions_hardcoded_pad(input_ids, padding_idx=1):
    mask = (input_ids != 1).long()
    return mask.cumsum(-1) * mask + padding_idx


def b29_padded_positions_cumsum_batch_axis(input_ids, padding_idx=1):
    mask = (input_ids != padding_idx).long()
    return mask.cumsum(0) * mask + padding_idx


# --- check_sinusoidal ------------------------------------------------------
def b29_sinusoidal_sin_cos_swapped(seq_len, dim, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    angle = pos / base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    enc = torch.empty(seq_len, dim, dtype=torch.float64)
    enc[:, 0::2], enc[:, 1::2] = angle.cos(), angle.sin()
    return enc.float()


def b29_sinusoidal_ignores_base(seq_len, dim, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    angle = pos / 10000.0 ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    enc = torch.empty(seq_len, dim, dtype=torch.float64)
    enc[:, 0::2], enc[:, 1::2] = angle.sin(), angle.cos()
    return enc.float()


def b29_sinusoidal_positions_from_one(seq_len, dim, base=10000.0):
    pos = np.arange(1, seq_len + 1)[:, None]
    angle = pos / base ** (np.arange(0, dim, 2) / dim)
    enc = np.zeros((seq_len, dim))
    enc[:, 0::2], enc[:, 1::2] = np.sin(angle), np.cos(angle)
    return torch.from_numpy(enc).float()


def b29_sinusoidal_concatenated_layout(seq_len, dim, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    angle = pos / base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    return torch.cat((angle.sin(), angle.cos()), dim=-1).float()


def b29_sinusoidal_float16(seq_len, dim, base=10000.0):
    pos = torch.arange(seq_len, dtype=torch.float64)[:, None]
    angle = pos / base ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    enc = torch.stack((angle.sin(), angle.cos()), dim=-1).flatten(-2)
    return enc.half()


# --- check_concatenated_sinusoidal -----------------------------------------
def b29_t2t_denominator_half(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / half)
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), dim=-1)


def b29_t2t_cos_first(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=torch.float64) / (half - 1))
    angles = torch.arange(seq_len, dtype=torch.float64)[:, None] * theta
    return torch.cat((angles.cos(), angles.sin()), dim=-1)


# --- check_t5_bucket -------------------------------------------------------
def _b29_t5(relative_position, bidirectional, num_buckets, max_distance,
        past_is_upper=False, halve=True, unidirectional_future=False):
    offsets = torch.as_tensor(relative_position).long()
    n_b = num_buckets // 2 if (bidirectional and halve) else num_buckets
    if bidirectional:
        upper = offsets < 0 if past_is_upper else offsets > 0
        first = torch.where(upper, n_b, 0)
        rho = offsets.abs()
    else:
        first = 0
        rho = offsets.clamp(min=0) if unidirectional_future else (-offsets).clamp(min=0)
    e = n_b // 2
    log_part = (torch.log(rho.clamp(min=1).float() / e)
                / math.log(max_distance / e) * (n_b - e))
    far = (e + log_part.long()).clamp(max=n_b - 1)
    return first + torch.where(rho < e, rho, far)


def b29_t5_bucket_upper_half_for_past(relative_position, bidirectional=True,
                                      num_buckets=32, max_distance=128):
    return _b29_t5(relative_position, bidirectional, num_buckets, max_distance,
               past_is_upper=True)


def b29_t5_bucket_unidirectional_keeps_future(relative_position, bidirectional=True,
                                              num_buckets=32, max_distance=128):
    return _b29_t5(relative_position, bidirectional, num_buckets, max_distance,
               unidirectional_future=True)


def b29_t5_bucket_hardcoded_max_distance(relative_position, bidirectional=True,
                                         num_buckets=32, max_distance=128):
    return _b29_t5(relative_position, bidirectional, num_buckets, 128)


def b29_t5_bucket_not_halved(relative_position, bidirectional=True,
                             num_buckets=32, max_distance=128):
    return _b29_t5(relative_position, bidirectional, num_buckets, max_distance,
               halve=False)


# --- check_alibi_bias_from_slopes ------------------------------------------
def b29_alibi_from_slopes_transposed(slopes, length):
    return slopes[:, None, None] * relative_positions(length).T.float()


def b29_alibi_from_slopes_divided_by_length(slopes, length):
    return slopes[:, None, None] * relative_positions(length).float() / length


# --- check_alibi_slopes ----------------------------------------------------
def b29_alibi_slopes_from_zero(num_heads):
    return torch.tensor([2.0 ** (-8 * i / num_heads) for i in range(num_heads)])


def b29_alibi_slopes_no_power_of_two_rule(num_heads):
    return 2.0 ** (-8 * torch.arange(1, num_heads + 1, dtype=torch.float64) / num_heads)


# --- check_reversal_gap ----------------------------------------------------
def b29_reversal_gap_flips_features(layer, x):
    return (layer(x.flip(-1)) - layer(x).flip(-1)).abs().max().item()


def b29_reversal_gap_output_not_reversed(layer, x):
    return (layer(x.flip(-2)) - layer(x)).abs().max().item()


def b29_reversal_gap_mean(layer, x):
    return (layer(x.flip(-2)) - layer(x).flip(-2)).abs().mean().item()


# --- check_shaw_index ------------------------------------------------------
def b29_shaw_index_ignores_offset(q_len, k_len, max_distance, query_offset=0):
    offsets = torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
    return offsets.clamp(-max_distance, max_distance) + max_distance


def b29_shaw_index_i_minus_j(q_len, k_len, max_distance, query_offset=0):
    queries = query_offset + torch.arange(q_len)
    offsets = queries[:, None] - torch.arange(k_len)[None, :]
    return offsets.clamp(-max_distance, max_distance) + max_distance


def b29_shaw_index_offset_on_keys(q_len, k_len, max_distance, query_offset=0):
    keys = query_offset + torch.arange(k_len)
    offsets = keys[None, :] - torch.arange(q_len)[:, None]
    return offsets.clamp(-max_distance, max_distance) + max_distance


# --- check_relative_shift --------------------------------------------------
def b29_relative_shift_pad_right(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (0, 1))
    rows = padded.reshape(*batch, k_len + 1, q_len)[..., 1:, :]
    return rows.reshape(*batch, q_len, k_len)


def b29_relative_shift_drops_last_row(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    rows = padded.reshape(*batch, k_len + 1, q_len)[..., :-1, :]
    return rows.reshape(*batch, q_len, k_len)


# --- check_apply_rope ------------------------------------------------------
def _b29_rope(x, positions, base, start=0, sign=-1.0, hard_base=None, half=False):
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(start, start + seq_len)
    b = base if hard_base is None else hard_base
    theta = b ** (sign * torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    angles = positions.to(torch.float64)[:, None] * theta
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    if half:
        a, c = x.chunk(2, dim=-1)
        return torch.cat((a * cos - c * sin, a * sin + c * cos), -1)
    a, c = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - c * sin, a * sin + c * cos), -1).flatten(-2)


def b29_apply_rope_default_from_one(x, positions=None, base=10000.0):
    return _b29_rope(x, positions, base, start=1)


def b29_apply_rope_half_pairs(x, positions=None, base=10000.0):
    return _b29_rope(x, positions, base, half=True)


def b29_apply_rope_hardcoded_base(x, positions=None, base=10000.0):
    return _b29_rope(x, positions, base, hard_base=10000.0)


def b29_apply_rope_in_place_pairs(x, positions=None, base=10000.0):
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    angles = positions.to(torch.float64)[:, None] * theta
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    out = x.clone()
    a, b = out[..., 0::2], out[..., 1::2]  # views into out
    a.copy_(a * cos - b * sin)
    b.copy_(a * sin + b * cos)  # a is already rotated here
    return out


def b29_apply_rope_positive_exponent(x, positions=None, base=10000.0):
    return _b29_rope(x, positions, base, sign=1.0)


# --- check_unrotated_outputs -----------------------------------------------
def b29_unrotated_turns_forward(outputs, positions, base=10000.0):
    return apply_rope(outputs, positions, base=base)


def b29_unrotated_default_positions(outputs, positions, base=10000.0):
    return apply_rope(outputs, -torch.arange(outputs.shape[-2]), base=base)


# --- check_linear_rope_attention -------------------------------------------
def _b29_linear(q, k, v, base, rotated_norm=False, plus_one=True, causal=True):
    phi = (lambda t: torch.nn.functional.elu(t) + 1) if plus_one else torch.nn.functional.elu
    phi_q, phi_k = phi(q), phi(k)
    rot_q, rot_k = apply_rope(phi_q, base=base), apply_rope(phi_k, base=base)
    n = q.shape[0]
    outs = []
    for i in range(n):
        last = i + 1 if causal else n
        num = rot_q[i] @ (rot_k[:last].T @ v[:last])
        if rotated_norm:
            den = rot_q[i] @ rot_k[:last].sum(0)
        else:
            den = phi_q[i] @ phi_k[:last].sum(0)
        outs.append(num / den)
    return torch.stack(outs)


def b29_linear_rope_rotated_normaliser(q, k, v, base=10000.0):
    return _b29_linear(q, k, v, base, rotated_norm=True)


def b29_linear_rope_phi_without_plus_one(q, k, v, base=10000.0):
    return _b29_linear(q, k, v, base, plus_one=False)


def b29_linear_rope_not_causal(q, k, v, base=10000.0):
    return _b29_linear(q, k, v, base, causal=False)


# --- check_repeat_kv -------------------------------------------------------
def b29_repeat_kv_tiled(kv, num_heads):
    reps = [1] * kv.dim()
    reps[-3] = num_heads // kv.shape[-3]
    return kv.repeat(*reps)


def b29_repeat_kv_sequence_axis(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=-2)


# --- check_decode_positions ------------------------------------------------
def b29_decode_positions_one_late(cache_len, num_new):
    return torch.arange(cache_len + 1, cache_len + num_new + 1)


def b29_decode_positions_restart_at_zero(cache_len, num_new):
    return torch.arange(num_new)


# --- check_streaming_cache -------------------------------------------------
def b29_streaming_cache_forgets_sinks_in_shift(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window
    moved = apply_rope(cached[..., total - window:, :], torch.full((window,), -shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b29_streaming_cache_rotates_forward(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    moved = apply_rope(cached[..., total - window:, :], torch.full((window,), shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b29_streaming_cache_four_sinks_hardcoded(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - 4
    moved = apply_rope(cached[..., total - window:, :], torch.full((window,), -shift))
    return torch.cat((cached[..., :4, :], moved), dim=-2)


# --- check_rope_matrix_2d_blocks -------------------------------------------
def _b29_blocks(row, column, dim, base, step=4, clockwise=False):
    theta = base ** (-step * torch.arange(dim // 4, dtype=torch.float64) / dim)
    angles = torch.stack((row * theta, column * theta), dim=-1).flatten()
    s = -1.0 if clockwise else 1.0
    return torch.block_diag(*[
        torch.stack([torch.stack([a.cos(), -s * a.sin()]),
                     torch.stack([s * a.sin(), a.cos()])]) for a in angles])


def b29_rope_2d_blocks_one_d_exponent(row, column, dim, base=10000.0):
    return _b29_blocks(row, column, dim, base, step=2)


def b29_rope_2d_blocks_clockwise(row, column, dim, base=10000.0):
    return _b29_blocks(row, column, dim, base, clockwise=True)


def b29_rope_2d_blocks_row_column_swapped(row, column, dim, base=10000.0):
    return _b29_blocks(column, row, dim, base)


# --- check_apply_rope_2d ---------------------------------------------------
def b29_rope_2d_strided_halves(x, rows, columns, base=10000.0):
    out = torch.empty_like(x)
    out[..., 0::2] = apply_rope(x[..., 0::2], rows, base=base)
    out[..., 1::2] = apply_rope(x[..., 1::2], columns, base=base)
    return out


def b29_rope_2d_rows_columns_swapped(x, rows, columns, base=10000.0):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((apply_rope(first, columns, base=base),
                      apply_rope(second, rows, base=base)), dim=-1)


def b29_rope_2d_full_dim_frequencies(x, rows, columns, base=10000.0):
    first, second = x.chunk(2, dim=-1)
    freqs = rope_frequencies(x.shape[-1], base)[: x.shape[-1] // 4]
    return torch.cat((apply_rope(first, rows, frequencies=freqs),
                      apply_rope(second, columns, frequencies=freqs)), dim=-1)


# --- check_slowest_wavelength ----------------------------------------------
def b29_slowest_wavelength_no_exponent(dim, base):
    return 2 * math.pi * base


def b29_slowest_wavelength_no_two_pi(dim, base):
    return base ** (1 - 2 / dim)


# --- check_expected_score --------------------------------------------------
def b29_expected_score_sin_sign(cross, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(2 * len(cross), base)
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1])
            + angles.sin() * (cross[:, 0, 1] - cross[:, 1, 0])).sum(-1)


def b29_expected_score_dim_is_pairs(cross, offsets, base=10000.0):
    angles = offsets.double()[:, None] * base ** (
        -2 * torch.arange(len(cross), dtype=torch.float64) / len(cross))
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1])
            + angles.sin() * (cross[:, 1, 0] - cross[:, 0, 1])).sum(-1)


# --- check_score_asymmetry -------------------------------------------------
def _b29_asym(query, key, offsets, base, conj=True, plus=False):
    theta = rope_frequencies(query.shape[-1], base)
    angles = offsets.double()[:, None] * theta
    cq = complex_pairs(query)
    eta = (cq.conj() if conj else cq) * complex_pairs(key)
    a = (eta * torch.exp(1j * angles)).sum(-1).real
    b = (eta * torch.exp(-1j * angles)).sum(-1).real
    return a + b if plus else a - b


def b29_score_asymmetry_no_conjugate(query, key, offsets, base=10000.0):
    return _b29_asym(query, key, offsets, base, conj=False)


def b29_score_asymmetry_sum(query, key, offsets, base=10000.0):
    return _b29_asym(query, key, offsets, base, plus=True)


def b29_score_asymmetry_ignores_base(query, key, offsets, base=10000.0):
    return _b29_asym(query, key, offsets, 10000.0)


# --- check_positional_head_query -------------------------------------------
def b29_positional_query_negative_target(key, target, base=10000.0):
    return apply_rope(key[None], torch.tensor([-target]), base=base)[0]


def b29_positional_query_ignores_base(key, target, base=10000.0):
    return apply_rope(key[None], torch.tensor([target]))[0]


# --- check_extended_rows ---------------------------------------------------
def _b29_rows(table, length, option, end_off=0, swap=False, period_off=0):
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1)]
    if option == "copy":
        return table[torch.arange(length) % (rows - period_off)]
    where = torch.linspace(0, rows - 1 + end_off, length)
    low = where.floor().long().clamp(max=rows - 2)
    f = (where - low)[:, None]
    if swap:
        return f * table[low] + (1 - f) * table[low + 1]
    return (1 - f) * table[low] + f * table[low + 1]


def b29_extended_rows_interpolate_past_end(table, length, option):
    return _b29_rows(table, length, option, end_off=1)


def b29_extended_rows_weights_swapped(table, length, option):
    return _b29_rows(table, length, option, swap=True)


def b29_extended_rows_copy_period_short(table, length, option):
    return _b29_rows(table, length, option, period_off=1)


# --- check_alibi_bias_at_positions -----------------------------------------
def b29_alibi_at_positions_uses_indices(slopes, positions):
    idx = torch.arange(len(positions), dtype=slopes.dtype)
    return -slopes[:, None, None] * (idx[None, :] - idx[:, None]).abs()


def b29_alibi_at_positions_no_abs(slopes, positions):
    return -slopes[:, None, None] * (positions[None, :] - positions[:, None])


# --- check_ntk_frequencies -------------------------------------------------
def b29_ntk_exponent_inverted(dim, base, factor):
    new_base = base * factor ** ((dim - 2) / dim)
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b29_ntk_also_divided(dim, base, factor):
    new_base = base * factor ** (dim / (dim - 2))
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim) / factor


# --- check_llama3_frequencies ----------------------------------------------
def _b29_by_parts(dim, base, factor, train_len, alpha, beta, two_pi=True, reverse=False):
    theta = rope_frequencies(dim, base).double()
    turns = train_len * theta / (2 * math.pi if two_pi else 1.0)
    kept = ((turns - alpha) / (beta - alpha)).clamp(0, 1)
    if reverse:
        kept = 1 - kept
    return (1 - kept) * theta / factor + kept * theta


def b29_llama3_ramp_reversed(dim, base, factor, train_len, alpha, beta):
    return _b29_by_parts(dim, base, factor, train_len, alpha, beta, reverse=True)


def b29_llama3_turns_without_two_pi(dim, base, factor, train_len, alpha, beta):
    return _b29_by_parts(dim, base, factor, train_len, alpha, beta, two_pi=False)


def b29_llama3_alpha_beta_swapped(dim, base, factor, train_len, alpha, beta):
    return _b29_by_parts(dim, base, factor, train_len, beta, alpha)


# --- check_pi_frequencies --------------------------------------------------
def b29_pi_multiplied(dim, base, factor):
    return base ** -(torch.arange(0, dim, 2, dtype=torch.float64) / dim) * factor


def b29_pi_all_dims(dim, base, factor):
    return base ** -(torch.arange(dim, dtype=torch.float64) / dim) / factor


# --- check_dynamic_ntk_frequencies -----------------------------------------
def _b29_dyn(dim, base, factor, orig, seq_len, use_max=True, minus=True, intdiv=False):
    length = max(seq_len, orig) if use_max else seq_len
    ratio = length // orig if intdiv else length / orig
    scale = factor * ratio - ((factor - 1) if minus else 0)
    new_base = base * scale ** (dim / (dim - 2))
    return new_base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def b29_dynamic_ntk_no_max(dim, base, factor, original_max_position, seq_len):
    return _b29_dyn(dim, base, factor, original_max_position, seq_len, use_max=False)


def b29_dynamic_ntk_without_minus(dim, base, factor, original_max_position, seq_len):
    return _b29_dyn(dim, base, factor, original_max_position, seq_len, minus=False)


def b29_dynamic_ntk_integer_ratio(dim, base, factor, original_max_position, seq_len):
    return _b29_dyn(dim, base, factor, original_max_position, seq_len, intdiv=True)


# --- check_yarn_frequencies ------------------------------------------------
def _b29_yarn(dim, base, factor, orig, beta_fast, beta_slow, rounding=True, reverse=False):
    theta_all = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)

    def pair_at(turns):
        return dim * math.log(orig / (2 * math.pi * turns)) / (2 * math.log(base))

    if rounding:
        low = max(math.floor(pair_at(beta_fast)), 0)
        high = min(math.ceil(pair_at(beta_slow)), dim - 1)
    else:
        low, high = max(pair_at(beta_fast), 0), min(pair_at(beta_slow), dim - 1)
    high += 0.001 if low == high else 0
    pairs = torch.arange(dim // 2, dtype=torch.float64)
    ramp = ((pairs - low) / (high - low)).clamp(0, 1)
    if reverse:
        return theta_all * ramp + theta_all / factor * (1 - ramp)
    return theta_all * (1 - ramp) + theta_all / factor * ramp


def b29_yarn_betas_swapped(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b29_yarn(dim, base, factor, original_max_position, beta_slow, beta_fast)


def b29_yarn_no_rounding(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b29_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow,
                 rounding=False)


def b29_yarn_blend_reversed(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b29_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow,
                 reverse=True)


HELDOUT_BATCH_29 = [
    Heldout("check_cross_attention", "scores scaled by sqrt of the model width d, not of d_h",
            b29_cross_attention_scale_by_model_width,
            ("d_h", "sqrt(d", "temperature", "head width", "model width", "scaling factor")),
    Heldout("check_cross_attention", "softmax over the queries (dim=0), not over the keys",
            b29_cross_attention_softmax_over_queries,
            ("axis", "over the keys", "sum to 1", "sum to one", "over the queries")),
    Heldout("check_cross_attention", "queries from the memory z, keys and values from y",
            b29_cross_attention_roles_swapped,
            ("swap", "roles", "queries from", "keys and values from", "the wrong input")),
    Heldout("check_attention", "masked_fill(mask, -inf): the mask's True read as 'hide'",
            b29_attention_mask_inverted, ("invert", "true means", "~mask", "keep", "mask convention", "opposite")),
    Heldout("check_attention", "masked scores filled with 0 instead of -inf",
            b29_attention_fill_zero, ("-inf", "fill", "zero", "infinity", "still attend")),
    Heldout("check_attention", "scores divided by d instead of sqrt(d)",
            b29_attention_scale_by_d, ("sqrt", "square root", "temperature", "scaling factor", "divided by d")),
    Heldout("check_position_recovery", "floor instead of round to the nearest integer",
            b29_position_recovery_floor, ("floor", "round", "nearest", "truncat")),
    Heldout("check_position_recovery", "1/o rounded without subtracting 1",
            b29_position_recovery_no_minus_one, ("off by one", "- 1", "minus 1", "one too", "subtract")),
    Heldout("check_position_parameter_counts", "part 2 counts a bias vector of the linear map",
            b29_parameter_counts_bias_in_map, ("bias",)),
    Heldout("check_position_parameter_counts", "part 3 counts one projection instead of three (Q, K and V)",
            b29_parameter_counts_one_projection, ("three", "each projection", "q, k and v", "q, k, v", "3nd", "3 n d")),
    Heldout("check_decayed_rows", "decay (1 - wd)^steps: the learning rate left out",
            b29_decayed_rows_ignores_lr, ("lr", "learning rate", "ignores", "lr * weight_decay")),
    Heldout("check_decayed_rows", "loop range(1, steps): one step too few",
            b29_decayed_rows_loop_off_by_one, ("off by one", "one step", "steps - 1", "one too few")),
    Heldout("check_decayed_rows", "linear decay 1 - lr*wd*steps instead of the power",
            b29_decayed_rows_linear, ("linear", "compound", "power", "exponent", "geometric")),
    Heldout("check_padded_positions", "cumsum of the mask not multiplied by the mask: pads get running positions",
            b29_padded_positions_pads_not_reset,
            ("not reset", "pads get", "padding tokens", "multiply by the mask", "padding position")),
    Heldout("check_padded_positions", "padding id hard-coded to 1, argument padding_idx ignored in the mask",
            b29_padded_positions_hardcoded_pad, ("padding_idx", "ignores", "hard-coded", "hard coded")),
    Heldout("check_padded_positions", "cumsum along the batch axis (dim 0)",
            b29_padded_positions_cumsum_batch_axis, ("axis", "batch", "along the sequence", "dim=0", "dim 0")),
    Heldout("check_sinusoidal", "cos on the even columns, sin on the odd",
            b29_sinusoidal_sin_cos_swapped, ("swap", "sin and cos", "cos and sin", "even", "odd")),
    Heldout("check_sinusoidal", "base hard-coded to 10000",
            b29_sinusoidal_ignores_base, ("ignores base", "base argument", "hard-coded", "hard coded", "ignores")),
    Heldout("check_sinusoidal", "positions 1..n instead of 0..n-1 (numpy)",
            b29_sinusoidal_positions_from_one, ("off by one", "position 0", "start at 0", "starts at 1", "shifted")),
    Heldout("check_sinusoidal", "sines then cosines concatenated (tensor2tensor layout), not interleaved",
            b29_sinusoidal_concatenated_layout, ("interleav", "concaten", "layout", "halves")),
    Heldout("check_sinusoidal", "returned in float16",
            b29_sinusoidal_float16, ("float16", "half precision", "dtype", "precision")),
    Heldout("check_concatenated_sinusoidal", "exponent l/(d/2) instead of l/(d/2 - 1)",
            b29_t2t_denominator_half, ("d/2 - 1", "half - 1", "denominator", "exponent", "slowest")),
    Heldout("check_concatenated_sinusoidal", "cosines first, then sines",
            b29_t2t_cos_first, ("order", "swap", "cosines first", "sines first", "sin then cos")),
    Heldout("check_t5_bucket", "bidirectional: upper half of the buckets given to the past (j < i)",
            b29_t5_bucket_upper_half_for_past, ("sign", "direction", "past", "future", "j - i", "upper half")),
    Heldout("check_t5_bucket", "unidirectional: keeps the future offsets, clamps the past to 0",
            b29_t5_bucket_unidirectional_keeps_future, ("sign", "past", "future", "direction", "causal")),
    Heldout("check_t5_bucket", "max_distance hard-coded to 128",
            b29_t5_bucket_hardcoded_max_distance, ("max_distance", "ignores")),
    Heldout("check_t5_bucket", "num_buckets not halved when bidirectional",
            b29_t5_bucket_not_halved, ("half", "halve", "num_buckets // 2", "two halves")),
    Heldout("check_alibi_bias_from_slopes", "relative positions transposed: m (i - j)",
            b29_alibi_from_slopes_transposed, ("transpos", "i - j", "sign", "upper", "lower")),
    Heldout("check_alibi_bias_from_slopes", "bias divided by the length",
            b29_alibi_from_slopes_divided_by_length, ("normalis", "normaliz", "divid", "scaled", "by the length")),
    Heldout("check_alibi_slopes", "exponents start at 0: the first slope is 1",
            b29_alibi_slopes_from_zero, ("off by one", "first slope", "start", "2^(-8/n)", "i = 1")),
    Heldout("check_alibi_slopes", "2^(-8i/n) used for every head count, ignoring the power-of-two rule",
            b29_alibi_slopes_no_power_of_two_rule, ("power of two", "power of 2", "non-power", "interleav", "closest")),
    Heldout("check_reversal_gap", "flips the feature axis instead of the sequence axis",
            b29_reversal_gap_flips_features, ("axis", "feature", "sequence axis", "columns", "wrong dimension")),
    Heldout("check_reversal_gap", "layer(x) not reversed before comparing",
            b29_reversal_gap_output_not_reversed, ("reverse the output", "reversed back", "layer(x)[reversal]",
                                               "not reversed", "un-revers")),
    Heldout("check_reversal_gap", "mean of the absolute gap instead of the max",
            b29_reversal_gap_mean, ("max", "mean", "largest", "average")),
    Heldout("check_shaw_index", "query_offset ignored",
            b29_shaw_index_ignores_offset, ("query_offset", "ignores", "offset ignored")),
    Heldout("check_shaw_index", "offsets i - j instead of j - i",
            b29_shaw_index_i_minus_j, ("sign", "i - j", "j - i", "revers", "mirror")),
    Heldout("check_shaw_index", "query_offset added to the key positions",
            b29_shaw_index_offset_on_keys, ("query_offset", "keys", "queries", "wrong side")),
    Heldout("check_relative_shift", "padding column added on the right instead of the left",
            b29_relative_shift_pad_right, ("pad", "left", "right", "side")),
    Heldout("check_relative_shift", "drops the last row of the padded view instead of the first",
            b29_relative_shift_drops_last_row, ("first row", "last row", "slice", "drop")),
    Heldout("check_apply_rope", "default positions 1..L instead of 0..L-1",
            b29_apply_rope_default_from_one,
            ("default positions", "position 0", "off by one", "start at 0", "positions=none")),
    Heldout("check_apply_rope", "pairs (l, l + d/2) (half layout) where interleaved pairs are asked",
            b29_apply_rope_half_pairs, ("layout", "interleav", "half", "rotate_half", "(l, l + d/2)")),
    Heldout("check_apply_rope", "base hard-coded to 10000",
            b29_apply_rope_hardcoded_base, ("ignores base", "base argument", "hard-coded", "hard coded", "ignores")),
    Heldout("check_apply_rope", "in-place update: the second component uses the already rotated first",
            b29_apply_rope_in_place_pairs, ("in place", "in-place", "overwrit", "already rotated", "copy")),
    Heldout("check_apply_rope", "frequencies base^(+2l/d): exponent sign lost",
            b29_apply_rope_positive_exponent, ("exponent", "negative", "faster", "base^(-", "increas")),
    Heldout("check_unrotated_outputs", "turned forward by R_p again instead of back by R_p^T",
            b29_unrotated_turns_forward, ("direction", "transpose", "inverse", "forward", "negat", "twice")),
    Heldout("check_unrotated_outputs", "positions argument ignored: turned back by the row index",
            b29_unrotated_default_positions, ("ignores", "row index", "given positions", "positions argument")),
    Heldout("check_linear_rope_attention", "normaliser built from the rotated features",
            b29_linear_rope_rotated_normaliser, ("normalis", "normaliz", "denominator", "rotat")),
    Heldout("check_linear_rope_attention", "phi = elu without the + 1",
            b29_linear_rope_phi_without_plus_one, ("elu", "+ 1", "+1", "feature map", "phi", "positive")),
    Heldout("check_linear_rope_attention", "sums over all keys: not causal",
            b29_linear_rope_not_causal, ("causal", "future", "j <= i", "all keys", "later keys")),
    Heldout("check_repeat_kv", "kv heads tiled with repeat instead of repeat_interleave",
            b29_repeat_kv_tiled, ("repeat_interleave", "tile", "group", "order", "consecutive")),
    Heldout("check_repeat_kv", "repeat_interleave along the sequence axis",
            b29_repeat_kv_sequence_axis, ("axis", "sequence", "head axis", "dim=-3", "wrong dimension")),
    Heldout("check_decode_positions", "positions start at cache_len + 1",
            b29_decode_positions_one_late, ("off by one", "one late", "starts at", "cache_len + 1")),
    Heldout("check_decode_positions", "new tokens numbered from 0, cache length ignored",
            b29_decode_positions_restart_at_zero, ("cache length", "restart", "from 0", "ignores", "cache_len")),
    Heldout("check_streaming_cache", "shift total - window: the sinks not subtracted",
            b29_streaming_cache_forgets_sinks_in_shift, ("sinks", "shift", "off by", "in-cache position")),
    Heldout("check_streaming_cache", "window keys rotated forward by +shift",
            b29_streaming_cache_rotates_forward, ("direction", "sign", "backward", "negat", "forward")),
    Heldout("check_streaming_cache", "sinks hard-coded to 4",
            b29_streaming_cache_four_sinks_hardcoded,
            ("sinks argument", "ignores", "hard-coded", "hard coded", "number of sinks")),
    Heldout("check_rope_matrix_2d_blocks", "theta'_l = b^(-2l/d) (the 1-D frequencies) instead of b^(-4l/d)",
            b29_rope_2d_blocks_one_d_exponent, ("exponent", "4l", "4l/d", "1-d frequencies", "one-dimensional")),
    Heldout("check_rope_matrix_2d_blocks", "blocks turn clockwise: sin signs swapped",
            b29_rope_2d_blocks_clockwise, ("transpos", "direction", "sign", "clockwise")),
    Heldout("check_rope_matrix_2d_blocks", "row and column angles swapped",
            b29_rope_2d_blocks_row_column_swapped, ("swap", "rows and columns", "columns and rows", "transpos")),
    Heldout("check_apply_rope_2d", "even coordinates at the rows, odd at the columns, not the two halves",
            b29_rope_2d_strided_halves, ("half", "halves", "chunk", "interleav", "split")),
    Heldout("check_apply_rope_2d", "first half at the columns, second at the rows",
            b29_rope_2d_rows_columns_swapped, ("swap", "rows and columns", "columns and rows", "transpos")),
    Heldout("check_apply_rope_2d", "each half uses the first d/4 frequencies of the full width d",
            b29_rope_2d_full_dim_frequencies,
            ("d/2", "half width", "width of each half", "full width", "dimension of the half")),
    Heldout("check_slowest_wavelength", "2 pi b: the exponent 1 - 2/d left out",
            b29_slowest_wavelength_no_exponent, ("exponent", "1 - 2/d", "last pair", "d - 2", "slowest pair")),
    Heldout("check_slowest_wavelength", "b^(1 - 2/d) without the factor 2 pi",
            b29_slowest_wavelength_no_two_pi, ("2π", "2 pi", "2*pi", "radian", "turn")),
    Heldout("check_expected_score", "sine term with C_01 - C_10 (sign)",
            b29_expected_score_sin_sign, ("sign", "antisymmetric", "c_10 - c_01", "transpos", "sine term")),
    Heldout("check_expected_score", "frequencies for dimension d/2 (len(cross)) instead of d",
            b29_expected_score_dim_is_pairs, ("d/2", "2 * len", "number of pairs", "head dimension", "dimension d")),
    Heldout("check_score_asymmetry", "complex pairs multiplied without conjugating the query",
            b29_score_asymmetry_no_conjugate, ("conj", "conjugate")),
    Heldout("check_score_asymmetry", "s(delta) + s(-delta) instead of the difference",
            b29_score_asymmetry_sum, ("sum instead", "difference", "s(-", "symmetric", "plus", "added")),
    Heldout("check_score_asymmetry", "base ignored",
            b29_score_asymmetry_ignores_base, ("ignores base", "base argument", "hard-coded", "hard coded", "ignores")),
    Heldout("check_positional_head_query", "key rotated by -target",
            b29_positional_query_negative_target, ("sign", "direction", "-target", "negat", "mirror")),
    Heldout("check_positional_head_query", "base ignored",
            b29_positional_query_ignores_base,
            ("ignores base", "base argument", "hard-coded", "hard coded", "ignores")),
    Heldout("check_extended_rows", "interpolate: linspace(0, L) overshoots the last row",
            b29_extended_rows_interpolate_past_end,
            ("overshoot", "off by one", "rows - 1", "last row", "l - 1", "past the end")),
    Heldout("check_extended_rows", "interpolate: the two weights swapped",
            b29_extended_rows_weights_swapped, ("weights", "swap", "fraction", "revers")),
    Heldout("check_extended_rows", "copy: period L - 1 instead of L",
            b29_extended_rows_copy_period_short, ("period", "modulo", "off by one", "% l", "last row")),
    Heldout("check_alibi_bias_at_positions", "uses indices 0..n-1, not the positions given",
            b29_alibi_at_positions_uses_indices, ("real positions", "indices", "ignores", "given positions", "0..n-1")),
    Heldout("check_alibi_bias_at_positions", "no absolute value: -m (p_j - p_i)",
            b29_alibi_at_positions_no_abs, ("abs", "absolute", "symmetric", "|p_j - p_i|", "sign")),
    Heldout("check_ntk_frequencies", "base scaled by s^((d-2)/d), exponent inverted",
            b29_ntk_exponent_inverted, ("exponent", "d/(d-2)", "d / (d - 2)", "(d-2)/d", "invert")),
    Heldout("check_ntk_frequencies", "NTK base and then every frequency also divided by s (PI on top)",
            b29_ntk_also_divided,
            ("position interpolation", "both", "pair 0", "unchanged", "also divided", "fastest pair")),
    Heldout("check_llama3_frequencies", "ramp reversed: fast pairs interpolated, slow pairs kept",
            b29_llama3_ramp_reversed, ("revers", "high-frequency", "fast pairs", "slow pairs", "swap", "backwards")),
    Heldout("check_llama3_frequencies", "turns L theta without 2 pi",
            b29_llama3_turns_without_two_pi, ("2π", "2 pi", "wavelength", "radian", "2*pi")),
    Heldout("check_llama3_frequencies", "alpha and beta swapped",
            b29_llama3_alpha_beta_swapped, ("alpha", "beta", "swap")),
    Heldout("check_pi_frequencies", "frequencies multiplied by s",
            b29_pi_multiplied, ("multipl", "divide", "direction", "faster", "slower")),
    Heldout("check_pi_frequencies", "d frequencies from arange(d)/d, not d/2",
            b29_pi_all_dims, ("d/2", "shape", "number of", "too many", "pairs")),
    Heldout("check_dynamic_ntk_frequencies", "no max with the original length: shorter inputs get scale < 1",
            b29_dynamic_ntk_no_max,
            ("max(", "shorter", "below the original", "scale below 1", "less than 1", "never below")),
    Heldout("check_dynamic_ntk_frequencies", "scale s n / L without the - (s - 1)",
            b29_dynamic_ntk_without_minus, ("s - 1", "factor - 1", "scale", "formula")),
    Heldout("check_dynamic_ntk_frequencies", "integer division n // L in the scale",
            b29_dynamic_ntk_integer_ratio, ("integer", "floor", "division", "//")),
    Heldout("check_yarn_frequencies", "beta_fast and beta_slow swapped",
            b29_yarn_betas_swapped, ("beta_fast", "beta_slow", "swap")),
    Heldout("check_yarn_frequencies", "ramp ends not rounded (floor/ceil) to pair indices",
            b29_yarn_no_rounding, ("floor", "ceil", "round", "integer")),
    Heldout("check_yarn_frequencies", "blend reversed: theta / s where the ramp is 0",
            b29_yarn_blend_reversed, ("revers", "blend", "swap", "backwards", "theta / s where")),
]



# Batch 30 (issue 32, sixth pass): written on 2026-11-29 at about 08:26-08:29 UTC by a separate session from the
# exercises, their solutions and each checker's signature and first docstring line only, without opening this file or
# any earlier batch, after every change of batch 29's pass; measured once at 08:29 UTC. Its entry for ALiBi's symmetric
# -m|j - i| as the causal bias is left out: it is correct on every entry the exercise defines.

_B30_F64 = torch.float64


# ---------------------------------------------------------------- 01 permutation
def b30_cross_attention_scale_by_keys(y, z, w_q, w_k, w_v):
    q, k, v = y @ w_q, z @ w_k, z @ w_v
    scores = q @ k.T / math.sqrt(z.shape[0])  # number of keys, not d_h
    return torch.softmax(scores, dim=-1) @ v


def b30_cross_attention_softmax_over_queries(y, z, w_q, w_k, w_v):
    q, k, v = y @ w_q, z @ w_k, z @ w_v
    weights = torch.softmax(q @ k.T / math.sqrt(q.shape[-1]), dim=0)
    return weights @ v


def b30_attention_mask_inverted(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def b30_attention_fill_zero(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, 0.0)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def b30_attention_scale_by_d(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def b30_position_recovery_floor(outputs):
    return torch.floor(1.0 / outputs.double() - 1.0)


def b30_position_recovery_no_minus_one(outputs):
    return (1.0 / outputs.double()).round()


# ---------------------------------------------------------------- 02 learned
def b30_parameter_counts_one_projection(positions, width):
    return positions * width, positions * width, positions * width


def b30_parameter_counts_with_bias(positions, width):
    return positions * width, positions * width + width, 3 * positions * width


def b30_decayed_rows_no_lr(initial, lr, weight_decay, steps):
    return initial * (1 - weight_decay) ** steps


def b30_decayed_rows_loop_off_by_one(initial, lr, weight_decay, steps):
    rows = initial.clone()
    for _ in range(1, steps):
        rows = rows * (1 - lr * weight_decay)
    return rows


def b30_decayed_rows_linear(initial, lr, weight_decay, steps):
    return initial * (1 - lr * weight_decay * steps)


def b30_padded_positions_no_offset(input_ids, padding_idx=1):
    is_token = (input_ids != padding_idx).long()
    return torch.cumsum(is_token, dim=-1) * is_token


def b30_padded_positions_hardcoded_pad(input_ids, padding_idx=1):
    is_token = (input_ids != 1).long()
    return torch.cumsum(is_token, dim=-1) * is_token + padding_idx


def b30_padded_positions_batch_axis(input_ids, padding_idx=1):
    is_token = (input_ids != padding_idx).long()
    return torch.cumsum(is_token, dim=0) * is_token + padding_idx


# ---------------------------------------------------------------- 03 sinusoidal
def b30_sinusoidal_cos_first(seq_len, dim, base=10000.0):
    angle = torch.arange(seq_len, dtype=_B30_F64)[:, None] / base ** (torch.arange(0, dim, 2, dtype=_B30_F64) / dim)
    enc = torch.empty(seq_len, dim, dtype=_B30_F64)
    enc[:, 0::2] = angle.cos()
    enc[:, 1::2] = angle.sin()
    return enc.float()


def b30_sinusoidal_hardcoded_base(seq_len, dim, base=10000.0):
    pos = np.arange(seq_len)[:, None]
    angle = pos / 10000.0 ** (np.arange(0, dim, 2) / dim)
    enc = np.zeros((seq_len, dim))
    enc[:, 0::2], enc[:, 1::2] = np.sin(angle), np.cos(angle)
    return torch.from_numpy(enc).float()


def b30_sinusoidal_exponent_i_over_d(seq_len, dim, base=10000.0):
    i = torch.arange(dim // 2, dtype=_B30_F64)
    angle = torch.arange(seq_len, dtype=_B30_F64)[:, None] * base ** (-i / dim)
    return torch.stack((angle.sin(), angle.cos()), dim=-1).flatten(-2).float()


def b30_concat_sinusoidal_over_half(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=_B30_F64) / half)
    angles = torch.arange(seq_len, dtype=_B30_F64)[:, None] * theta
    return torch.cat((angles.sin(), angles.cos()), dim=-1)


def b30_concat_sinusoidal_cos_then_sin(seq_len, dim, base=10000.0):
    half = dim // 2
    theta = base ** (-torch.arange(half, dtype=_B30_F64) / (half - 1))
    angles = torch.arange(seq_len, dtype=_B30_F64)[:, None] * theta
    return torch.cat((angles.cos(), angles.sin()), dim=-1)


# ---------------------------------------------------------------- 04 relative
def _b30_t5(relative_position, bidirectional, num_buckets, max_distance,
        *, past_sign=-1, future_first=True, rounding=None, fixed_max=None):
    offsets = torch.as_tensor(relative_position).long()
    n_b = num_buckets // 2 if bidirectional else num_buckets
    if bidirectional:
        first = torch.where(offsets > 0 if future_first else offsets < 0, n_b, 0)
        rho = offsets.abs()
    else:
        first = 0
        rho = (past_sign * offsets).clamp(min=0)
    e = n_b // 2
    md = fixed_max if fixed_max is not None else max_distance
    log_part = torch.log(rho.clamp(min=1).float() / e) / math.log(md / e) * (n_b - e)
    log_part = log_part.round().long() if rounding == "round" else log_part.long()
    far = (e + log_part).clamp(max=n_b - 1)
    return first + torch.where(rho < e, rho, far)


def b30_t5_bucket_causal_wrong_sign(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _b30_t5(relative_position, bidirectional, num_buckets, max_distance, past_sign=+1)


def b30_t5_bucket_past_gets_upper_half(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _b30_t5(relative_position, bidirectional, num_buckets, max_distance, future_first=False)


def b30_t5_bucket_hardcoded_max_distance(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _b30_t5(relative_position, bidirectional, num_buckets, max_distance, fixed_max=128)


def b30_t5_bucket_rounds_log(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    return _b30_t5(relative_position, bidirectional, num_buckets, max_distance, rounding="round")


def b30_alibi_from_slopes_i_minus_j(slopes, length):
    idx = torch.arange(length)
    return slopes[:, None, None] * (idx[:, None] - idx[None, :]).float()



def b30_alibi_from_slopes_keys_from_one(slopes, length):
    keys, queries = torch.arange(1, length + 1), torch.arange(length)
    return slopes[:, None, None] * (keys[None, :] - queries[:, None]).float()


def b30_reversal_gap_flips_features(layer, x):
    return (layer(x.flip(-1)) - layer(x).flip(-1)).abs().max().item()


def b30_reversal_gap_output_not_reversed(layer, x):
    reversal = torch.arange(x.shape[-2] - 1, -1, -1)
    return (layer(x[reversal]) - layer(x)).abs().max().item()


def b30_reversal_gap_mean(layer, x):
    reversal = torch.arange(x.shape[-2] - 1, -1, -1)
    return (layer(x[reversal]) - layer(x)[reversal]).abs().mean().item()


def b30_shaw_index_ignores_offset(q_len, k_len, max_distance, query_offset=0):
    offsets = torch.arange(k_len)[None, :] - torch.arange(q_len)[:, None]
    return offsets.clamp(-max_distance, max_distance) + max_distance


def b30_shaw_index_i_minus_j(q_len, k_len, max_distance, query_offset=0):
    queries = query_offset + torch.arange(q_len)
    offsets = queries[:, None] - torch.arange(k_len)[None, :]
    return offsets.clamp(-max_distance, max_distance) + max_distance


def b30_shaw_index_clip_upper_short(q_len, k_len, max_distance, query_offset=0):
    rows = [[min(max(j - (query_offset + i), -max_distance), max_distance - 1) + max_distance
             for j in range(k_len)] for i in range(q_len)]
    return torch.tensor(rows)


def b30_relative_shift_pad_right(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (0, 1))
    rows = padded.reshape(*batch, k_len + 1, q_len)[..., 1:, :]
    return rows.reshape(*batch, q_len, k_len)


def b30_relative_shift_drop_last(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    rows = padded.reshape(*batch, k_len + 1, q_len)[..., :-1, :]
    return rows.reshape(*batch, q_len, k_len)


def b30_relative_shift_assumes_square(rel_logits):
    *batch, q_len, k_len = rel_logits.shape
    padded = torch.nn.functional.pad(rel_logits, (1, 0))
    rows = padded.reshape(*batch, q_len + 1, q_len)[..., 1:, :]
    return rows.reshape(*batch, q_len, k_len)


# ---------------------------------------------------------------- 05 RoPE
def _b30_rope(x, positions, base, *, sign=1.0, step=2, pairing="interleaved", dtype=_B30_F64):
    seq_len, dim = x.shape[-2:]
    if positions is None:
        positions = torch.arange(seq_len)
    first_pair = 1 if step == "from_one" else 0
    theta = base ** (-2 * torch.arange(first_pair, dim // 2 + first_pair, dtype=_B30_F64) / dim)
    angles = positions.to(dtype)[:, None] * theta.to(dtype)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    if pairing == "interleaved":
        a, b = x[..., 0::2], x[..., 1::2]
    else:
        a, b = x.chunk(2, dim=-1)
    out_a, out_b = a * cos - sign * b * sin, sign * a * sin + b * cos
    if pairing == "interleaved":
        return torch.stack((out_a, out_b), -1).flatten(-2)
    return torch.cat((out_a, out_b), -1)


def b30_apply_rope_clockwise(x, positions=None, base=10000.0):
    return _b30_rope(x, positions, base, sign=-1.0)


def b30_apply_rope_pairs_from_one(x, positions=None, base=10000.0):
    return _b30_rope(x, positions, base, step="from_one")


def b30_apply_rope_half_pairs(x, positions=None, base=10000.0):
    return _b30_rope(x, positions, base, pairing="half")


def b30_apply_rope_angles_float16(x, positions=None, base=10000.0):
    return _b30_rope(x, positions, base, dtype=torch.float16)


def b30_apply_rope_ignores_positions(x, positions=None, base=10000.0):
    return _b30_rope(x, None, base)


def b30_rope_2d_swapped_axes(x, rows, columns, base=10000.0):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((apply_rope(first, columns, base=base), apply_rope(second, rows, base=base)), dim=-1)


def b30_rope_2d_interleaved_split(x, rows, columns, base=10000.0):
    first, second = x[..., 0::2], x[..., 1::2]
    out = torch.stack((apply_rope(first, rows, base=base), apply_rope(second, columns, base=base)), -1)
    return out.flatten(-2)


def b30_rope_2d_full_width_frequencies(x, rows, columns, base=10000.0):
    dim = x.shape[-1]
    theta = rope_frequencies(dim, base)[: dim // 4]
    first, second = x.chunk(2, dim=-1)
    return torch.cat((apply_rope(first, rows, frequencies=theta), apply_rope(second, columns, frequencies=theta)),
                     dim=-1)


def b30_unrotated_turns_forward(outputs, positions, base=10000.0):
    return apply_rope(outputs, positions, base=base)


def b30_unrotated_ignores_base(outputs, positions, base=10000.0):
    return apply_rope(outputs, -positions)


def _b30_linear(q, k, v, base, *, rotated_norm=False, causal=True, plus_one=True):
    phi_q, phi_k = (torch.nn.functional.elu(x) + (1 if plus_one else 0) for x in (q, k))
    rot_q, rot_k = apply_rope(phi_q, base=base), apply_rope(phi_k, base=base)
    n = q.shape[0]
    outs = []
    for i in range(n):
        upto = i + 1 if causal else n
        state = rot_k[:upto].T @ v[:upto]
        if rotated_norm:
            den = rot_q[i] @ rot_k[:upto].sum(0)
        else:
            den = phi_q[i] @ phi_k[:upto].sum(0)
        outs.append(rot_q[i] @ state / den)
    return torch.stack(outs)


def b30_linear_rope_rotated_normaliser(q, k, v, base=10000.0):
    return _b30_linear(q, k, v, base, rotated_norm=True)


def b30_linear_rope_not_causal(q, k, v, base=10000.0):
    return _b30_linear(q, k, v, base, causal=False)


def b30_linear_rope_elu_without_one(q, k, v, base=10000.0):
    return _b30_linear(q, k, v, base, plus_one=False)


# ---------------------------------------------------------------- 06 RoPE impl
def b30_repeat_kv_tiled(kv, num_heads):
    reps = num_heads // kv.shape[-3]
    return torch.cat([kv] * reps, dim=-3)


def b30_repeat_kv_sequence_axis(kv, num_heads):
    return kv.repeat_interleave(num_heads // kv.shape[-3], dim=-2)


def b30_decode_positions_off_by_one(cache_len, num_new):
    return torch.arange(cache_len + 1, cache_len + num_new + 1)


def b30_decode_positions_restart(cache_len, num_new):
    return torch.arange(num_new)


def b30_streaming_cache_turns_forward(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - sinks
    moved = apply_rope(cached[..., total - window:, :], torch.full((window,), shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def b30_streaming_cache_four_sinks(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window - 4
    moved = apply_rope(cached[..., total - window:, :], torch.full((window,), -shift))
    return torch.cat((cached[..., :4, :], moved), dim=-2)


def b30_streaming_cache_shift_forgets_sinks(cached, window, sinks=4):
    total = cached.shape[-2]
    shift = total - window
    moved = apply_rope(cached[..., total - window:, :], torch.full((window,), -shift))
    return torch.cat((cached[..., :sinks, :], moved), dim=-2)


def _b30_blocks(row, column, dim, base, *, exp=4, swap=False, transposed=False):
    theta = base ** (-exp * torch.arange(dim // 4, dtype=_B30_F64) / dim)
    a1, a2 = (column, row) if swap else (row, column)
    angles = torch.stack((a1 * theta, a2 * theta), dim=-1).flatten()
    s = -1 if transposed else 1
    return torch.block_diag(*[torch.tensor([[math.cos(a), -s * math.sin(a)], [s * math.sin(a), math.cos(a)]],
                                           dtype=_B30_F64) for a in angles.tolist()])


def b30_rope_blocks_exponent_2(row, column, dim, base=10000.0):
    return _b30_blocks(row, column, dim, base, exp=2)


def b30_rope_blocks_row_column_swapped(row, column, dim, base=10000.0):
    return _b30_blocks(row, column, dim, base, swap=True)


def b30_rope_blocks_transposed(row, column, dim, base=10000.0):
    return _b30_blocks(row, column, dim, base, transposed=True)


# ---------------------------------------------------------------- 07 long range
def b30_slowest_wavelength_no_two_pi(dim, base):
    return base ** (1 - 2 / dim)


def b30_slowest_wavelength_limit(dim, base):
    return 2 * math.pi * base


def b30_expected_score_sin_sign(cross, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(2 * len(cross), base)
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1])
            + angles.sin() * (cross[:, 0, 1] - cross[:, 1, 0])).sum(-1)


def b30_expected_score_dim_is_pairs(cross, offsets, base=10000.0):
    angles = offsets.double()[:, None] * rope_frequencies(len(cross), base).repeat_interleave(2)[: len(cross)]
    return (angles.cos() * (cross[:, 0, 0] + cross[:, 1, 1])
            + angles.sin() * (cross[:, 1, 0] - cross[:, 0, 1])).sum(-1)


def _b30_pairs(x):
    return torch.complex(x[..., 0::2].double(), x[..., 1::2].double())


def b30_score_asymmetry_reversed(query, key, offsets, base=10000.0):
    theta = rope_frequencies(query.shape[-1], base)
    angles = offsets.double()[:, None] * theta
    eta = _b30_pairs(query).conj() * _b30_pairs(key)
    return ((eta * torch.exp(-1j * angles)).sum(-1).real - (eta * torch.exp(1j * angles)).sum(-1).real)


def b30_score_asymmetry_no_conj(query, key, offsets, base=10000.0):
    theta = rope_frequencies(query.shape[-1], base)
    angles = offsets.double()[:, None] * theta
    eta = _b30_pairs(query) * _b30_pairs(key)
    return ((eta * torch.exp(1j * angles)).sum(-1).real - (eta * torch.exp(-1j * angles)).sum(-1).real)


def b30_positional_query_negative_target(key, target, base=10000.0):
    return apply_rope(key[None], torch.tensor([-target]), base=base)[0]


def b30_positional_query_target_plus_one(key, target, base=10000.0):
    return apply_rope(key[None], torch.tensor([target + 1]), base=base)[0]


# ---------------------------------------------------------------- 08 trained
def _b30_rows(table, length, option, *, period_minus_one=False, end=None):
    rows = table.shape[0]
    if option == "clip":
        return table[torch.arange(length).clamp(max=rows - 1)]
    if option == "copy":
        return table[torch.arange(length) % (rows - 1 if period_minus_one else rows)]
    where = torch.linspace(0, rows - 1 if end is None else end, length)
    low = where.floor().long().clamp(max=rows - 2)
    fraction = (where - low)[:, None]
    return (1 - fraction) * table[low] + fraction * table[low + 1]


def b30_extended_rows_copy_period_minus_one(table, length, option):
    return _b30_rows(table, length, option, period_minus_one=True)


def b30_extended_rows_interpolate_to_rows(table, length, option):
    return _b30_rows(table, length, option, end=table.shape[0])


def b30_alibi_at_positions_uses_indices(slopes, positions):
    idx = torch.arange(len(positions))
    return -slopes[:, None, None] * (idx[None, :] - idx[:, None]).abs()


def b30_alibi_at_positions_no_minus(slopes, positions):
    return slopes[:, None, None] * (positions[None, :] - positions[:, None]).abs()


def b30_alibi_at_positions_no_abs(slopes, positions):
    return -slopes[:, None, None] * (positions[None, :] - positions[:, None])


def _b30_slopes_pow2(n, *, start=1):
    return [2 ** (-8 * i / n) for i in range(start, n + start)]


def b30_alibi_slopes_from_zero(num_heads):
    closest = 2 ** math.floor(math.log2(num_heads))
    slopes = _b30_slopes_pow2(closest, start=0)
    if closest < num_heads:
        slopes += _b30_slopes_pow2(2 * closest, start=0)[0::2][: num_heads - closest]
    return torch.tensor(slopes)


def b30_alibi_slopes_no_power_of_two_rule(num_heads):
    return torch.tensor(_b30_slopes_pow2(num_heads))


def b30_alibi_slopes_base_e(num_heads):
    closest = 2 ** math.floor(math.log2(num_heads))
    slopes = [math.exp(-8 * i / closest) for i in range(1, closest + 1)]
    if closest < num_heads:
        slopes += [math.exp(-8 * i / (2 * closest)) for i in range(1, 2 * closest + 1)][0::2][: num_heads - closest]
    return torch.tensor(slopes)


# ---------------------------------------------------------------- 09 stretching
def _b30_theta(dim, base):
    return base ** (-torch.arange(0, dim, 2, dtype=_B30_F64) / dim)


def b30_ntk_no_exponent(dim, base, factor):
    return _b30_theta(dim, base * factor)


def b30_ntk_exponent_inverted(dim, base, factor):
    return _b30_theta(dim, base * factor ** ((dim - 2) / dim))


def b30_pi_multiplies(dim, base, factor):
    return _b30_theta(dim, base) * factor


def b30_pi_scales_base(dim, base, factor):
    return _b30_theta(dim, base * factor)


def b30_dynamic_ntk_no_floor_at_train_len(dim, base, factor, original_max_position, seq_len):
    scale = factor * seq_len / original_max_position - (factor - 1)
    return _b30_theta(dim, base * scale ** (dim / (dim - 2)))


def b30_dynamic_ntk_ratio_only(dim, base, factor, original_max_position, seq_len):
    scale = max(seq_len, original_max_position) / original_max_position
    return _b30_theta(dim, base * scale ** (dim / (dim - 2)))


def b30_dynamic_ntk_integer_ratio(dim, base, factor, original_max_position, seq_len):
    length = max(seq_len, original_max_position)
    scale = factor * (length // original_max_position) - (factor - 1)
    return _b30_theta(dim, base * scale ** (dim / (dim - 2)))


def _b30_by_parts(dim, base, factor, train_len, alpha, beta, *, two_pi=True, swap=False, reverse=False):
    theta = _b30_theta(dim, base)
    turns = train_len * theta / (2 * math.pi if two_pi else 1.0)
    lo, hi = (beta, alpha) if swap else (alpha, beta)
    kept = ((turns - lo) / (hi - lo)).clamp(0, 1)
    if reverse:
        return kept * theta / factor + (1 - kept) * theta
    return (1 - kept) * theta / factor + kept * theta


def b30_llama3_alpha_beta_swapped(dim, base, factor, train_len, alpha, beta):
    return _b30_by_parts(dim, base, factor, train_len, alpha, beta, swap=True)


def b30_llama3_no_two_pi(dim, base, factor, train_len, alpha, beta):
    return _b30_by_parts(dim, base, factor, train_len, alpha, beta, two_pi=False)


def b30_llama3_blend_reversed(dim, base, factor, train_len, alpha, beta):
    return _b30_by_parts(dim, base, factor, train_len, alpha, beta, reverse=True)


def _b30_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, *, integer=True, swap=False,
              reverse=False):
    theta = _b30_theta(dim, base)
    if swap:
        beta_fast, beta_slow = beta_slow, beta_fast

    def pair_at(turns):
        return dim * math.log(original_max_position / (2 * math.pi * turns)) / (2 * math.log(base))

    low = max(math.floor(pair_at(beta_fast)) if integer else pair_at(beta_fast), 0)
    high = min(math.ceil(pair_at(beta_slow)) if integer else pair_at(beta_slow), dim - 1)
    high += 0.001 if low == high else 0
    ramp = ((torch.arange(dim // 2, dtype=_B30_F64) - low) / (high - low)).clamp(0, 1)
    if reverse:
        ramp = 1 - ramp
    return theta * (1 - ramp) + theta / factor * ramp


def b30_yarn_no_floor_ceil(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b30_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, integer=False)


def b30_yarn_betas_swapped(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b30_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, swap=True)


def b30_yarn_ramp_reversed(dim, base, factor, original_max_position, beta_fast, beta_slow):
    return _b30_yarn(dim, base, factor, original_max_position, beta_fast, beta_slow, reverse=True)


HELDOUT_BATCH_30 = [
    Heldout("check_cross_attention", "scores scaled by sqrt(number of keys), not sqrt(d_h)",
            b30_cross_attention_scale_by_keys, ("scale", "sqrt(d", "d_h", "temperature")),
    Heldout("check_cross_attention", "softmax over the queries (dim=0)",
            b30_cross_attention_softmax_over_queries,
            ("axis", "dim=0", "over the queries", "sum to 1", "sum to one", "columns")),
    Heldout("check_attention", "mask inverted: fills the allowed entries",
            b30_attention_mask_inverted, ("invert", "~mask", "masks the allowed", "opposite", "negat")),
    Heldout("check_attention", "masked scores filled with 0 instead of -inf",
            b30_attention_fill_zero, ("-inf", "fill", "zero", "leak")),
    Heldout("check_attention", "scores divided by d, not sqrt(d)",
            b30_attention_scale_by_d, ("sqrt", "scale", "temperature")),
    Heldout("check_position_recovery", "floor instead of nearest integer",
            b30_position_recovery_floor, ("floor", "round", "nearest", "truncat")),
    Heldout("check_position_recovery", "forgets the - 1: round(1/o)",
            b30_position_recovery_no_minus_one, ("off by one", "- 1", "minus 1", "one too")),
    Heldout("check_position_parameter_counts", "part 3 counts one projection, not Q, K and V",
            b30_parameter_counts_one_projection, ("three", "q, k", "each projection", "part 3")),
    Heldout("check_position_parameter_counts", "part 2 adds a bias of d",
            b30_parameter_counts_with_bias, ("bias", "part 2", "+ d")),
    Heldout("check_decayed_rows", "decay factor without the learning rate",
            b30_decayed_rows_no_lr, ("lr", "learning rate", "ignores")),
    Heldout("check_decayed_rows", "loop runs steps - 1 times",
            b30_decayed_rows_loop_off_by_one, ("off by one", "steps - 1", "one step", "too few")),
    Heldout("check_decayed_rows", "linear decay 1 - lr wd steps instead of a power",
            b30_decayed_rows_linear, ("linear", "compound", "power", "exponent", "geometric")),
    Heldout("check_padded_positions", "real tokens start at 1, not padding_idx + 1",
            b30_padded_positions_no_offset, ("padding_idx", "offset", "start", "+ 1")),
    Heldout("check_padded_positions", "padding id hard-coded to 1",
            b30_padded_positions_hardcoded_pad, ("padding_idx", "ignores", "hard-coded", "hardcoded")),
    Heldout("check_padded_positions", "cumulative sum over the batch axis",
            b30_padded_positions_batch_axis, ("axis", "batch", "dim=0", "across sequences")),
    Heldout("check_sinusoidal", "cos on even columns, sin on odd",
            b30_sinusoidal_cos_first, ("swap", "sin and cos", "cos and sin", "cosine first", "order")),
    Heldout("check_sinusoidal", "base hard-coded to 10000 (numpy)",
            b30_sinusoidal_hardcoded_base, ("base", "ignores", "hard-coded", "hardcoded")),
    Heldout("check_sinusoidal", "exponent i/d instead of 2i/d",
            b30_sinusoidal_exponent_i_over_d, ("exponent", "2i/d", "factor 2", "factor of 2", "frequenc")),
    Heldout("check_concatenated_sinusoidal", "exponent over d/2, not d/2 - 1",
            b30_concat_sinusoidal_over_half, ("half - 1", "d/2 - 1", "denominator", "exponent", "slowest")),
    Heldout("check_concatenated_sinusoidal", "cosines then sines",
            b30_concat_sinusoidal_cos_then_sin, ("swap", "order", "cosines first", "sines then", "halves")),
    Heldout("check_t5_bucket", "unidirectional buckets the future, not the past",
            b30_t5_bucket_causal_wrong_sign, ("sign", "direction", "past", "future", "unidirectional")),
    Heldout("check_t5_bucket", "bidirectional: the past gets the upper half",
            b30_t5_bucket_past_gets_upper_half, ("sign", "direction", "past", "future", "upper half", "halves")),
    Heldout("check_t5_bucket", "max_distance hard-coded to 128",
            b30_t5_bucket_hardcoded_max_distance, ("max_distance", "ignores", "hard-coded", "hardcoded")),
    Heldout("check_t5_bucket", "log bucket rounded, not truncated",
            b30_t5_bucket_rounds_log, ("round", "trunc", "floor")),
    Heldout("check_alibi_bias_from_slopes", "m (i - j) instead of m (j - i)",
            b30_alibi_from_slopes_i_minus_j, ("sign", "i - j", "j - i", "transpos")),
    Heldout("check_alibi_bias_from_slopes", "keys numbered from 1: m (j + 1 - i)",
            b30_alibi_from_slopes_keys_from_one, ("off by one", "diagonal", "shift", "not zero")),
    Heldout("check_reversal_gap", "reverses the features, not the tokens",
            b30_reversal_gap_flips_features, ("axis", "feature", "tokens", "last axis", "flip(-1)")),
    Heldout("check_reversal_gap", "compares with the unreversed output",
            b30_reversal_gap_output_not_reversed, ("reverse the output", "output", "undo", "align", "both")),
    Heldout("check_reversal_gap", "mean instead of max of the gap", b30_reversal_gap_mean, ("max", "mean", "average")),
    Heldout("check_shaw_index", "ignores query_offset",
            b30_shaw_index_ignores_offset, ("query_offset", "offset", "ignores", "cache")),
    Heldout("check_shaw_index", "offset i - j instead of j - i",
            b30_shaw_index_i_minus_j, ("sign", "j - i", "i - j", "direction", "mirror")),
    Heldout("check_shaw_index", "clip upper bound c - 1 (loop)",
            b30_shaw_index_clip_upper_short, ("off by one", "clip", "2c", "boundary", "upper")),
    Heldout("check_relative_shift", "pads on the right", b30_relative_shift_pad_right, ("pad", "left", "right")),
    Heldout("check_relative_shift", "drops the last row, not the first",
            b30_relative_shift_drop_last, ("first row", "last row", "drop", "discard")),
    Heldout("check_relative_shift", "reshape assumes Lq = Lk (no memory)",
            b30_relative_shift_assumes_square, ("memory", "square", "lk", "l_k", "k_len")),
    Heldout("check_apply_rope", "rotates clockwise (sign of sin)",
            b30_apply_rope_clockwise, ("sign", "clockwise", "direction", "transpos", "inverse")),
    Heldout("check_apply_rope", "pair index starts at 1",
            b30_apply_rope_pairs_from_one, ("off by one", "pair 0", "first pair", "exponent", "start")),
    Heldout("check_apply_rope", "pairs (l, l + d/2) in the interleaved layout",
            b30_apply_rope_half_pairs, ("pair", "layout", "half", "interleav", "adjacent")),
    Heldout("check_apply_rope", "angles computed in float16",
            b30_apply_rope_angles_float16, ("float16", "precision", "half precision", "dtype", "overflow")),
    Heldout("check_apply_rope", "ignores the positions given",
            b30_apply_rope_ignores_positions,
            ("ignores positions", "positions argument", "ignores", "default positions")),
    Heldout("check_apply_rope_2d", "rows and columns swapped", b30_rope_2d_swapped_axes, ("swap", "rows", "columns")),
    Heldout("check_apply_rope_2d", "halves taken as even/odd coordinates",
            b30_rope_2d_interleaved_split, ("half", "halves", "split", "chunk", "layout", "even")),
    Heldout("check_apply_rope_2d", "frequencies of the full width, not of each half",
            b30_rope_2d_full_width_frequencies, ("width", "per half", "d/2", "exponent", "each half")),
    Heldout("check_unrotated_outputs", "turns forward by R_i, not back",
            b30_unrotated_turns_forward, ("sign", "direction", "inverse", "transpos", "back")),
    Heldout("check_unrotated_outputs", "ignores base", b30_unrotated_ignores_base, ("base", "ignores")),
    Heldout("check_linear_rope_attention", "normaliser with rotated features",
            b30_linear_rope_rotated_normaliser, ("normalis", "denominator", "rotat")),
    Heldout("check_linear_rope_attention", "sums over all keys (not causal)",
            b30_linear_rope_not_causal, ("causal", "future", "all keys", "later keys")),
    Heldout("check_linear_rope_attention", "feature map elu without + 1",
            b30_linear_rope_elu_without_one, ("feature map", "elu", "positive", "+ 1", "phi")),
    Heldout("check_repeat_kv", "heads tiled (cat) instead of grouped",
            b30_repeat_kv_tiled, ("interleav", "group", "order", "tile", "repeat")),
    Heldout("check_repeat_kv", "repeated along the sequence axis",
            b30_repeat_kv_sequence_axis, ("axis", "sequence", "dim=-2", "wrong dimension")),
    Heldout("check_decode_positions", "positions start at cache_len + 1",
            b30_decode_positions_off_by_one, ("off by one", "cache_len + 1", "start")),
    Heldout("check_decode_positions", "positions restart at 0",
            b30_decode_positions_restart, ("cache_len", "ignores", "offset", "restart", "from 0")),
    Heldout("check_streaming_cache", "turns the window forward by the shift",
            b30_streaming_cache_turns_forward, ("sign", "direction", "back", "forward")),
    Heldout("check_streaming_cache", "four sinks hard-coded",
            b30_streaming_cache_four_sinks, ("sinks", "ignores", "hard-coded", "hardcoded")),
    Heldout("check_streaming_cache", "shift forgets the sinks: n - window",
            b30_streaming_cache_shift_forgets_sinks, ("sinks", "shift", "off by", "renumber")),
    Heldout("check_rope_matrix_2d_blocks", "exponent 2l/d, not 4l/d",
            b30_rope_blocks_exponent_2, ("exponent", "frequenc", "4l", "4 l")),
    Heldout("check_rope_matrix_2d_blocks", "row and column swapped",
            b30_rope_blocks_row_column_swapped, ("swap", "row", "column")),
    Heldout("check_rope_matrix_2d_blocks", "blocks transposed (clockwise)",
            b30_rope_blocks_transposed, ("sign", "transpos", "clockwise", "direction")),
    Heldout("check_slowest_wavelength", "forgets 2 pi",
            b30_slowest_wavelength_no_two_pi, ("2π", "2 pi", "2*pi", "radian", "factor")),
    Heldout("check_slowest_wavelength", "2 pi b (the limit, not the last pair)",
            b30_slowest_wavelength_limit, ("exponent", "1 - 2/d", "last pair", "slowest pair")),
    Heldout("check_expected_score", "sine term with the wrong sign",
            b30_expected_score_sin_sign, ("sign", "antisymmetric", "transpos", "c_10 - c_01")),
    Heldout("check_expected_score", "frequencies of d/2, not d",
            b30_expected_score_dim_is_pairs, ("dim", "frequenc", "pairs", "2 *", "width")),
    Heldout("check_score_asymmetry", "s(-delta) - s(delta)",
            b30_score_asymmetry_reversed, ("sign", "order", "reversed", "s(-")),
    Heldout("check_score_asymmetry", "no conjugate on the query", b30_score_asymmetry_no_conj, ("conj",)),
    Heldout("check_positional_head_query", "rotates by -target",
            b30_positional_query_negative_target, ("sign", "direction", "-target", "mirror")),
    Heldout("check_positional_head_query", "rotates by target + 1",
            b30_positional_query_target_plus_one, ("off by one", "target + 1", "one too")),
    Heldout("check_extended_rows", "copy with period L - 1",
            b30_extended_rows_copy_period_minus_one, ("off by one", "period", "modulo", "% ")),
    Heldout("check_extended_rows", "interpolation grid to L, not L - 1",
            b30_extended_rows_interpolate_to_rows, ("endpoint", "off by one", "linspace", "last row")),
    Heldout("check_alibi_bias_at_positions", "uses indices, ignores positions",
            b30_alibi_at_positions_uses_indices, ("real positions", "ignores", "index", "indices")),
    Heldout("check_alibi_bias_at_positions", "no minus sign",
            b30_alibi_at_positions_no_minus, ("sign", "minus", "negative", "penalty")),
    Heldout("check_alibi_bias_at_positions", "signed difference, no abs",
            b30_alibi_at_positions_no_abs, ("abs", "symmetric", "signed", "distance")),
    Heldout("check_alibi_slopes", "exponents from i = 0 (first slope 1)",
            b30_alibi_slopes_from_zero, ("off by one", "start", "first slope", "i = 1")),
    Heldout("check_alibi_slopes", "non-power-of-2 head counts use 2^(-8i/n)",
            b30_alibi_slopes_no_power_of_two_rule, ("power of 2", "power of two", "non-power", "interleav", "closest")),
    Heldout("check_alibi_slopes", "base e instead of 2", b30_alibi_slopes_base_e, ("base", "2^", "exp", "e^")),
    Heldout("check_ntk_frequencies", "base times s, no exponent d/(d-2)",
            b30_ntk_no_exponent, ("exponent", "d/(d-2)", "d / (d - 2)", "slowest")),
    Heldout("check_ntk_frequencies", "exponent (d-2)/d inverted",
            b30_ntk_exponent_inverted, ("exponent", "invert", "d/(d-2)", "d / (d - 2)", "(d-2)/d")),
    Heldout("check_pi_frequencies", "frequencies multiplied by s",
            b30_pi_multiplies, ("multipl", "divide", "faster", "instead of dividing")),
    Heldout("check_pi_frequencies", "base multiplied by s",
            b30_pi_scales_base, ("ntk", "every frequency", "all frequencies", "uniform", "divide")),
    Heldout("check_dynamic_ntk_frequencies", "no max(n, L): short inputs scaled below 1",
            b30_dynamic_ntk_no_floor_at_train_len,
            ("short", "max(", "below", "original_max_position", "clamp", "shorter")),
    Heldout("check_dynamic_ntk_frequencies", "scale n / L, factor ignored",
            b30_dynamic_ntk_ratio_only, ("factor", "ignores", "s n / l")),
    Heldout("check_dynamic_ntk_frequencies", "integer division n // L",
            b30_dynamic_ntk_integer_ratio, ("integer", "floor", "//", "division")),
    Heldout("check_llama3_frequencies", "low and high thresholds swapped",
            b30_llama3_alpha_beta_swapped, ("swap", "low", "high", "ramp", "thresholds")),
    Heldout("check_llama3_frequencies", "turns without 2 pi (L theta)",
            b30_llama3_no_two_pi, ("2π", "2 pi", "wavelength", "turn", "radian")),
    Heldout("check_llama3_frequencies", "blend reversed: fast pairs divided",
            b30_llama3_blend_reversed, ("revers", "blend", "swap", "fast pairs", "high-frequency")),
    Heldout("check_yarn_frequencies", "ramp ends not floored / ceiled",
            b30_yarn_no_floor_ceil, ("floor", "ceil", "round", "integer")),
    Heldout("check_yarn_frequencies", "beta_fast and beta_slow swapped",
            b30_yarn_betas_swapped, ("swap", "beta_fast", "beta_slow")),
    Heldout("check_yarn_frequencies", "ramp reversed",
            b30_yarn_ramp_reversed, ("revers", "ramp", "blend", "fast pairs", "high-frequency")),
]


_ECHOES = (
    re.compile(r"first wrong entry of .*? at index [^:]*: expected \S+, got \S+"),
    re.compile(r"should return \S+, yours returned \S+"),
    re.compile(r"returned .*? of shape \([^)]*\)( \([a-z0-9]+\))?; expected shape \([^)]*\)( \([^)]*\))?"),
    re.compile(r"raised [A-Za-z]*(Error|Exception)\b.*"),  # the exception's text and the student's line of code
    re.compile(r"^first differing input:.*"),
    re.compile(r"^your answer equals this mistake on .*"),
    re.compile(r"^failed \d+ of \d+ hidden cases?$"),
    # a checker's own report of the first wrong value, and its restatement of the rule, the same for every mistake
    re.compile(r"your .*? (is|are) \S+ times the expected ones?( on every entry)?: a constant factor is wrong"),
    re.compile(r"the token at position \d+, coordinate \d+ should be \S+, got \S+"),
    re.compile(r"pair ℓ = .*? is rotated by the angle m·θ_ℓ with θ_ℓ = base\^\(-2ℓ/d\)"),
    re.compile(r"position \d+, column \d+: expected .*?, got [^\s.]+"),
    re.compile(r"check the formula .*", re.IGNORECASE),
    re.compile(r"row \d+ of input_ids = .*?; the first difference is at column \d+\."),
    re.compile(r"real tokens count .*", re.IGNORECASE),
    re.compile(r"offset j - i = -?\d+ \([^)]*\): expected bucket \d+, got \d+"),
    re.compile(r"check the three ranges.*", re.IGNORECASE),
    re.compile(r"token \d+ \(row \d+, column \d+\), coordinate \d+, in the (first|second) half \((rows|columns)\), "
               r"should be \S+, got \S+"),
    re.compile(r"the first d/2 coordinates are rotated by 1-D RoPE of dimension d/2 at the row, the last d/2 at the "
               r"column"),
    re.compile(r"peaks at δ = \S+, not at \S+"),
    re.compile(r"for n heads, n a power of two, the slopes are 2\^\(-8h/n\).*", re.IGNORECASE),
    re.compile(r"read row clip\(.*?\) \+ \d+ = \d+; got \d+"),
    re.compile(r"the row of pair \(i, j\) is clip\(j - i, -c, c\) \+ c"),
)


def _rule_texts() -> list[str]:
    """Each frequency rule's restatement, appended to every message of its checker whatever the mistake."""
    from posenc.exercises import by_parts, scaling

    return [rule.verified[1] for rule in (scaling._PI, scaling._NTK, scaling._DYNAMIC, by_parts._YARN,
                                          by_parts._LLAMA3)]


def _without_calls(line: str) -> str:
    while "fn(" in line:
        start = line.index("fn(")
        depth, end = 0, start + 2
        for end in range(start + 2, len(line)):
            depth += {"(": 1, ")": -1}.get(line[end], 0)
            if depth == 0:
                break
        line = line[:start] + line[end + 1:]
    return line


def named(text: str, keywords: tuple[str, ...]) -> bool:
    """Whether the feedback names the mistake: a keyword appears in the diagnosis, not in an echo.

    The call shown in a message (``fn(...)``, its argument names and values), the generic report of the first
    wrong entry or a wrong shape, an exception's own text with the student's line of code, and the lines that
    only locate a difference are removed first: a keyword found only there names nothing.
    """
    for rule in _rule_texts():
        text = text.replace(rule, "")
    kept = []
    for line in text.splitlines():
        line = line.strip()
        for echo in _ECHOES:
            line = echo.sub("", line)
        kept.append(_without_calls(line).lower())
    return any(keyword.lower() in "\n".join(kept) for keyword in keywords)


def measure(verbose: bool = True, cases: list[Heldout] | None = None) -> tuple[int, int, int]:
    cases = HELDOUT if cases is None else cases
    rejected = hits = 0
    per: dict[str, list[int]] = {}
    for case in cases:
        result = getattr(ex, case.checker)(case.fn)
        text = "\n".join(result.feedback)
        is_named = (not result.passed) and named(text, case.keywords)
        rejected += not result.passed
        hits += is_named
        row = per.setdefault(case.checker, [0, 0, 0])
        row[0] += not result.passed
        row[1] += is_named
        row[2] += 1
        if verbose and not is_named:
            print(f"--- {case.checker} / {case.name}: {'rejected' if not result.passed else 'PASSED'}, not named")
            print("   ", text.replace("\n", "\n    ")[:600])
    total = len(cases)
    print(f"rejected {rejected}/{total} ({100 * rejected / total:.1f} %), named {hits}/{total} "
          f"({100 * hits / total:.1f} %)")
    for checker, (r, n, t) in per.items():
        print(f"  {checker}: rejected {r}/{t}, named {n}/{t}")
    return rejected, hits, total


# Every batch, in order, with how it was measured (the docstring gives each one's honest figure).
BATCHES: list[tuple[str, list[Heldout]]] = [
    ("batches 1 and 2", HELDOUT),
    *((f"batch {number}", batch) for number, batch in enumerate(
        (HELDOUT_BATCH_3, HELDOUT_BATCH_4, HELDOUT_BATCH_5, HELDOUT_BATCH_6, HELDOUT_BATCH_7), start=3)),
    *((f"batch {number} (measured once, then generalised from)", batch) for number, batch in enumerate(
        (HELDOUT_BATCH_8, HELDOUT_BATCH_9, HELDOUT_BATCH_10, HELDOUT_BATCH_11, HELDOUT_BATCH_12, HELDOUT_BATCH_13,
         HELDOUT_BATCH_14, HELDOUT_BATCH_15, HELDOUT_BATCH_16, HELDOUT_BATCH_17), start=8)),
    ("batch 18 (written before the generic readings, measured once before them)", HELDOUT_BATCH_18),
    ("batch 19 (written after the generic readings, measured once, then generalised from)", HELDOUT_BATCH_19),
    ("batch 20 (written after the generic readings, measured once, then generalised from)", HELDOUT_BATCH_20),
    ("batch 21 (written after the last change of the third pass, measured once)", HELDOUT_BATCH_21),
    ("batch 22 (written in the fourth pass, measured once, then generalised from)", HELDOUT_BATCH_22),
    ("batch 23 (written in the fourth pass, measured once, then generalised from)", HELDOUT_BATCH_23),
    ("batch 24 (written in the fourth pass, measured once, then generalised from)", HELDOUT_BATCH_24),
    ("batch 25 (written blind in the fifth pass, measured once, then generalised from)", HELDOUT_BATCH_25),
    ("batch 26 (written blind after batch 25's fixes, measured once, then generalised from)", HELDOUT_BATCH_26),
    ("batch 27 (written blind in the sixth pass, measured once, then generalised from)", HELDOUT_BATCH_27),
    ("batch 28 (written blind after batch 27's fixes, measured once, then generalised from)", HELDOUT_BATCH_28),
    ("batch 29 (written blind after batch 28's fixes, measured once, then generalised from)", HELDOUT_BATCH_29),
    ("batch 30 (written blind after batch 29's fixes, measured once)", HELDOUT_BATCH_30),
]


if __name__ == "__main__":
    quiet = "-q" in sys.argv
    chosen = [arg for arg in sys.argv[1:] if arg != "-q"]  # e.g. "19": only the batches whose label has that number
    totals = [0, 0, 0]
    for label, batch in BATCHES:
        if chosen and not any(label.split(" (")[0].endswith(f" {number}") for number in chosen):
            continue
        print(f"{label}:")
        for index, value in enumerate(measure(verbose=not quiet, cases=batch)):
            totals[index] += value
    rejected, hits, total = totals
    print(f"all: rejected {rejected}/{total}, named {hits}/{total} ({100 * hits / max(total, 1):.1f} %)")
