// `npm run tripwires:corpus`: precision and recall of the destructive rules over the labelled corpus.
import { evaluateCorpus, formatScore, loadCorpus } from "./corpus-evaluation.ts";

console.log(formatScore(evaluateCorpus(loadCorpus())));
