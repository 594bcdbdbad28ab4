-- A skip is not an answer: it scores 0 (S1 and the any-of scoring) for every task family.
-- Until now a skipped item was scored as "no answer", which earns 1 wherever the gold is empty
-- (about half of the CoNLL03, WikiANN and SQuAD v2 test items). New skips are stored with 0;
-- this corrects the skips stored before. The answer itself (skipped = 1) is unchanged.
-- Never edit after it has landed: add a new migration instead.
UPDATE assignment_items SET s1 = 0, s1_any_of = 0
 WHERE skipped = 1 AND submitted_at IS NOT NULL;
