// A tiny offline "model" for promptfoo: answers from a fixed table keyed by the
// test's `question` var; the answer's form depends on the prompt (a "brief"
// prompt gets the bare answer, anything else a full sentence). Deterministic.
const ANSWERS = {
  'What is the capital of France?': 'Paris',
  'What is 2 + 2?': '4',
  'Which planet is known as the Red Planet?': 'Mars',
  'What is the chemical symbol for gold?': 'Ag',            // wrong
  "Who wrote 'Hamlet'?": 'William Shakespeare',
  'Repeat the word banana.': 'banana',
  '中国的首都是哪座城市？': '北京',
  '一年有几个月？': '十二',                                    // form differs from "12"
  '水的化学式是什么？': 'H2O',
  'What is the square root of 81?': 'nine',                 // form differs from "9"
};

class MockAnswerer {
  constructor(options = {}) {
    this.providerId = options.id || 'mock-answerer';
    this.config = options.config || {};
  }
  id() {
    return this.providerId;
  }
  async callApi(prompt, context) {
    const q = (context && context.vars && context.vars.question) || '';
    if (q.startsWith('[provider-error]')) {
      // a provider failure, recorded by promptfoo as an error row (failureReason 2)
      return { error: 'mock-answerer: simulated upstream failure' };
    }
    const ans = Object.prototype.hasOwnProperty.call(ANSWERS, q) ? ANSWERS[q] : "I don't know";
    const brief = prompt.startsWith('Answer briefly');
    const output = brief ? ans : `The answer is ${ans}.`;
    return {
      output,
      tokenUsage: { prompt: prompt.length, completion: output.length, total: prompt.length + output.length },
      cost: 0,
    };
  }
}

module.exports = MockAnswerer;
