import { describe, expect, it } from 'vitest';
import {
  checkAnswer,
  checkAnswers,
  checkDefinition,
  checkMapping,
  compatiblePropertyType,
  decideOutcome,
  evaluateScreener,
  type QuestionDefinitionInput,
  type ScreenerDefinition,
  type ScreenerQuestionRules,
} from './screener-rules.js';

const q = (key: string, type: string, extra: Partial<QuestionDefinitionInput> = {}): QuestionDefinitionInput => ({ key, type, ...extra });
const frequency = q('freq', 'SINGLE_SELECT', {
  choices: [
    { id: 'weekly', label: 'Weekly', rule: 'QUALIFIES' },
    { id: 'monthly', label: 'Monthly' },
    { id: 'never', label: 'Never', rule: 'DISQUALIFIES' },
  ],
});
const age = q('age', 'NUMBER', { minimum: 0, maximum: 120, integer: true, ranges: [{ max: 17, rule: 'DISQUALIFIES' }, { min: 18, max: 65, rule: 'NEUTRAL' }] });

describe('checkDefinition', () => {
  it('accepts a definition using every feature', () => {
    expect(
      checkDefinition([
        frequency,
        age,
        q('devices', 'MULTI_SELECT', { choices: [{ id: 'ios', label: 'iOS' }, { id: 'web', label: 'Web', rule: 'QUALIFIES' }], showWhen: { questionKey: 'freq', choiceIds: ['weekly', 'monthly'] } }),
        q('consent', 'YES_NO', { choices: [{ id: 'no', label: 'Nein', rule: 'DISQUALIFIES' }, { id: 'yes', label: 'Ja' }] }),
        q('adult', 'YES_NO', { showWhen: { questionKey: 'age', range: { min: 18 } } }),
        q('rating', 'SCALE', { minimum: 1, maximum: 5, ranges: [{ max: 2, rule: 'DISQUALIFIES' }] }),
        q('why', 'LONG_FORM', { showWhen: { questionKey: 'consent', choiceIds: ['yes'] } }),
        q('born', 'DATE'),
      ]),
    ).toEqual([]);
  });

  // One row per rule: the definition, the path of the error, and a word its message must hold.
  it.each<[string, QuestionDefinitionInput[], string[], RegExp]>([
    ['a duplicate key', [q('a', 'SHORT_FORM'), q('a', 'DATE')], ['questions', '1', 'key'], /unique/],
    ['a select without choices', [q('a', 'SINGLE_SELECT')], ['questions', '0', 'choices'], /at least one choice/],
    ['a multi-select with an empty list', [q('a', 'MULTI_SELECT', { choices: [] })], ['questions', '0', 'choices'], /at least one/],
    ['choices on a text question', [q('a', 'SHORT_FORM', { choices: [{ id: 'x', label: 'X' }] })], ['questions', '0', 'choices'], /SINGLE_SELECT, MULTI_SELECT, YES_NO/],
    ['a duplicate choice id', [q('a', 'SINGLE_SELECT', { choices: [{ id: 'x', label: 'X' }, { id: 'x', label: 'Y' }] })], ['questions', '0', 'choices', '1', 'id'], /choices\/0/],
    ['a duplicate label ignoring case', [q('a', 'SINGLE_SELECT', { choices: [{ id: 'x', label: 'Yes' }, { id: 'y', label: ' yes' }] })], ['questions', '0', 'choices', '1', 'label'], /ignoring case/],
    ['YES_NO with other ids', [q('a', 'YES_NO', { choices: [{ id: 'y', label: 'Y' }, { id: 'n', label: 'N' }] })], ['questions', '0', 'choices'], /yes and no/],
    ['YES_NO with three choices', [q('a', 'YES_NO', { choices: [{ id: 'yes', label: 'Y' }, { id: 'no', label: 'N' }, { id: 'no', label: 'M' }] })], ['questions', '0', 'choices'], /exactly two/],
    ['minimum on a text question', [q('a', 'SHORT_FORM', { minimum: 1 })], ['questions', '0', 'minimum'], /NUMBER, SCALE/],
    ['ranges on a select', [{ ...frequency, ranges: [{ min: 1, rule: 'QUALIFIES' }] }], ['questions', '0', 'ranges'], /NUMBER, SCALE/],
    ['integer on a date', [q('a', 'DATE', { integer: true })], ['questions', '0', 'integer'], /NUMBER/],
    ['maximum below minimum', [q('a', 'NUMBER', { minimum: 5, maximum: 4 })], ['questions', '0', 'maximum'], /at least minimum/],
    ['a fractional bound of a whole-number question', [q('a', 'NUMBER', { integer: true, minimum: 0.5 })], ['questions', '0', 'minimum'], /whole/],
    ['a SCALE without minimum', [q('a', 'SCALE', { maximum: 5 })], ['questions', '0', 'minimum'], /needs a minimum/],
    ['a SCALE without maximum', [q('a', 'SCALE', { minimum: 1 })], ['questions', '0', 'maximum'], /needs a maximum/],
    ['a SCALE of fractions', [q('a', 'SCALE', { minimum: 1, maximum: 5, integer: false })], ['questions', '0', 'integer'], /whole/],
    ['a range without bounds', [q('a', 'NUMBER', { ranges: [{ rule: 'QUALIFIES' }] })], ['questions', '0', 'ranges', '0'], /min, max or both/],
    ['a reversed range', [q('a', 'NUMBER', { ranges: [{ min: 9, max: 3, rule: 'QUALIFIES' }] })], ['questions', '0', 'ranges', '0', 'max'], /at least min/],
    ['overlapping ranges', [q('a', 'NUMBER', { ranges: [{ max: 18, rule: 'DISQUALIFIES' }, { min: 18, rule: 'QUALIFIES' }] })], ['questions', '0', 'ranges', '1'], /overlaps ranges\/0/],
    ['a range outside minimum..maximum', [q('a', 'NUMBER', { minimum: 0, maximum: 10, ranges: [{ min: 11, rule: 'QUALIFIES' }] })], ['questions', '0', 'ranges', '0'], /no answer/],
    ['skip logic naming a later question', [q('a', 'SHORT_FORM', { showWhen: { questionKey: 'b', choiceIds: ['x'] } }), { ...frequency, key: 'b' }], ['questions', '0', 'showWhen', 'questionKey'], /earlier question/],
    ['skip logic naming itself', [{ ...frequency, showWhen: { questionKey: 'freq', choiceIds: ['weekly'] } }], ['questions', '0', 'showWhen', 'questionKey'], /earlier/],
    ['skip logic with both choiceIds and range', [frequency, q('b', 'DATE', { showWhen: { questionKey: 'freq', choiceIds: ['weekly'], range: { min: 1 } } })], ['questions', '1', 'showWhen'], /exactly one/],
    ['skip logic with neither', [frequency, q('b', 'DATE', { showWhen: { questionKey: 'freq' } })], ['questions', '1', 'showWhen'], /exactly one/],
    ['skip logic with an unknown choice', [frequency, q('b', 'DATE', { showWhen: { questionKey: 'freq', choiceIds: ['weekly', 'daily'] } })], ['questions', '1', 'showWhen', 'choiceIds', '1'], /weekly, monthly, never/],
    ['choiceIds on a number question', [age, q('b', 'DATE', { showWhen: { questionKey: 'age', choiceIds: ['x'] } })], ['questions', '1', 'showWhen', 'choiceIds'], /NUMBER question/],
    ['range on a select question', [frequency, q('b', 'DATE', { showWhen: { questionKey: 'freq', range: { min: 1 } } })], ['questions', '1', 'showWhen', 'range'], /SINGLE_SELECT question/],
    ['an empty skip range', [age, q('b', 'DATE', { showWhen: { questionKey: 'age', range: {} } })], ['questions', '1', 'showWhen', 'range'], /min, max or both/],
    ['a reversed skip range', [age, q('b', 'DATE', { showWhen: { questionKey: 'age', range: { min: 5, max: 1 } } })], ['questions', '1', 'showWhen', 'range', 'max'], /at least min/],
    ['a YES_NO skip on a third id', [q('c', 'YES_NO'), q('b', 'DATE', { showWhen: { questionKey: 'c', choiceIds: ['maybe'] } })], ['questions', '1', 'showWhen', 'choiceIds', '0'], /yes, no/],
  ])('refuses %s', (_what, questions, path, message) => {
    const errors = checkDefinition(questions);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.path).toEqual(path);
    expect(errors[0]!.message).toMatch(message);
  });

  it('reports every problem at once', () => {
    const errors = checkDefinition([q('a', 'SINGLE_SELECT'), q('a', 'NUMBER', { minimum: 3, maximum: 1 })]);
    expect(errors.map((error) => error.path.join('/'))).toEqual(['questions/0/choices', 'questions/1/key', 'questions/1/maximum']);
  });

  it('lets touching but not overlapping ranges through, open ends included', () => {
    expect(checkDefinition([q('a', 'NUMBER', { ranges: [{ max: 17, rule: 'DISQUALIFIES' }, { min: 17.5, max: 30, rule: 'QUALIFIES' }, { min: 31, rule: 'NEUTRAL' }] })])).toEqual([]);
    expect(checkDefinition([q('a', 'NUMBER', { ranges: [{ min: 31, rule: 'NEUTRAL' }, { max: 31, rule: 'QUALIFIES' }] })])).toHaveLength(1);
  });
});

describe('checkMapping', () => {
  const property = (propertyType: string, optionNames: string[] = []) => ({ propertyType, optionNames });
  const types = Object.entries(compatiblePropertyType);
  const allPropertyTypes = ['STRING', 'NUMBER', 'DATETIME', 'BOOLEAN', 'SINGLE_SELECT', 'MULTI_SELECT', 'LOCATION'];

  it.each(types)('maps a %s question to a %s property and to nothing else', (questionType, propertyType) => {
    const choices = questionType.endsWith('SELECT') ? [{ id: 'r', label: 'red' }] : undefined;
    for (const candidate of allPropertyTypes) {
      const errors = checkMapping({ type: questionType, choices }, property(candidate, ['Red']), ['questions', '3']);
      if (candidate === propertyType) expect(errors).toEqual([]);
      else expect(errors).toEqual([{ message: expect.stringContaining(`maps only to a ${propertyType} property; this property is ${candidate}`), path: ['questions', '3', 'mappedToPropertyId'] }]);
    }
  });

  it('names each choice whose label is no option of the property, and lists the options', () => {
    const errors = checkMapping(
      { type: 'MULTI_SELECT', choices: [{ id: 'a', label: 'RED' }, { id: 'b', label: 'Purple' }, { id: 'c', label: ' green ' }, { id: 'd', label: 'Pink' }] },
      property('MULTI_SELECT', ['Red', 'Green']),
      ['questions', '0'],
    );
    expect(errors.map((error) => error.path)).toEqual([
      ['questions', '0', 'choices', '1', 'label'],
      ['questions', '0', 'choices', '3', 'label'],
    ]);
    expect(errors[0]!.message).toMatch(/Red, Green/);
  });

  it('refuses a question type that maps to nothing', () => {
    expect(checkMapping({ type: 'ESSAY' }, property('STRING'), ['questions', '0'])[0]!.path).toEqual(['questions', '0', 'mappedToPropertyId']);
  });
});

const rules = (key: string, type: string, extra: Partial<ScreenerQuestionRules> = {}): ScreenerQuestionRules => ({ id: `id_${key}`, key, type, isRequired: false, ...extra });

/** A screener: frequency (required) → orders (shown for weekly or monthly) → big spender (shown for 10+ orders); age; devices; a YES_NO consent. */
const definition: ScreenerDefinition = {
  qualifyByDefault: false,
  questions: [
    rules('freq', 'SINGLE_SELECT', {
      isRequired: true,
      choices: [
        { id: 'weekly', label: 'Weekly', rule: 'QUALIFIES' },
        { id: 'monthly', label: 'Monthly', rule: 'NEUTRAL' },
        { id: 'never', label: 'Never', rule: 'DISQUALIFIES' },
      ],
    }),
    rules('orders', 'NUMBER', {
      isRequired: true,
      numberRules: { minimum: 0, maximum: 1000, integer: true, ranges: [{ max: 0, rule: 'DISQUALIFIES' }, { min: 50, rule: 'QUALIFIES' }] },
      showWhen: { questionKey: 'freq', choiceIds: ['weekly', 'monthly'] },
    }),
    rules('spend', 'SHORT_FORM', { isRequired: true, showWhen: { questionKey: 'orders', range: { min: 10 } } }),
    rules('devices', 'MULTI_SELECT', {
      choices: [
        { id: 'ios', label: 'iOS', rule: 'NEUTRAL' },
        { id: 'android', label: 'Android', rule: 'QUALIFIES' },
        { id: 'none', label: 'None', rule: 'DISQUALIFIES' },
      ],
    }),
    rules('consent', 'YES_NO', { choices: [{ id: 'yes', label: 'Yes', rule: 'NEUTRAL' }, { id: 'no', label: 'No', rule: 'DISQUALIFIES' }] }),
    rules('born', 'DATE'),
    rules('email', 'EMAIL'),
    rules('rating', 'SCALE', { numberRules: { minimum: 1, maximum: 5, integer: true, ranges: [] } }),
  ],
};

describe('checkAnswers: skip logic', () => {
  // answers → the keys shown
  it.each<[string, Record<string, unknown>, string[]]>([
    ['nothing answered shows the questions without conditions', {}, ['freq', 'devices', 'consent', 'born', 'email', 'rating']],
    ['never hides orders and so spend', { id_freq: 'never' }, ['freq', 'devices', 'consent', 'born', 'email', 'rating']],
    ['weekly shows orders', { id_freq: 'weekly', id_orders: 3 }, ['freq', 'orders', 'devices', 'consent', 'born', 'email', 'rating']],
    ['10 orders shows spend (inclusive bound)', { id_freq: 'monthly', id_orders: 10, id_spend: 'a lot' }, ['freq', 'orders', 'spend', 'devices', 'consent', 'born', 'email', 'rating']],
    ['9 orders does not', { id_freq: 'monthly', id_orders: '9' }, ['freq', 'orders', 'devices', 'consent', 'born', 'email', 'rating']],
    ['an invalid orders answer shows nothing that depends on it', { id_freq: 'weekly', id_orders: 10.5 }, ['freq', 'orders', 'devices', 'consent', 'born', 'email', 'rating']],
  ])('%s', (_what, answers, shownKeys) => {
    const { shown } = checkAnswers(definition, answers);
    expect(shown).toEqual(shownKeys.map((key) => `id_${key}`));
  });

  it('drops answers to hidden questions, even when the hiding is indirect', () => {
    const check = checkAnswers(definition, { id_freq: 'never', id_orders: 40, id_spend: 'lots' });
    expect(check.dropped).toEqual(['id_orders', 'id_spend']);
    expect([...check.accepted.keys()]).toEqual(['id_freq']);
    expect(check.errors).toEqual([]);
  });

  it('matches any chosen choice of a multi-select trigger', () => {
    const def: ScreenerDefinition = {
      qualifyByDefault: true,
      questions: [definition.questions[3]!, rules('which', 'SHORT_FORM', { showWhen: { questionKey: 'devices', choiceIds: ['android'] } })],
    };
    expect(checkAnswers(def, { id_devices: ['ios', 'android'] }).shown).toEqual(['id_devices', 'id_which']);
    expect(checkAnswers(def, { id_devices: ['ios'] }).shown).toEqual(['id_devices']);
  });
});

describe('checkAnswers: validation', () => {
  it('requires a shown required question and not a hidden one', () => {
    expect(checkAnswers(definition, {}).errors).toEqual([{ questionId: 'id_freq', questionKey: 'freq', message: 'Answer this question', code: 'REQUIRED' }]);
    expect(checkAnswers(definition, { id_freq: 'weekly', id_orders: '  ' }).errors).toEqual([{ questionId: 'id_orders', questionKey: 'orders', message: 'Answer this question', code: 'REQUIRED' }]);
    expect(checkAnswers(definition, { id_freq: 'never' }).errors).toEqual([]);
  });

  it('refuses an answer to no question of the screener', () => {
    expect(checkAnswers(definition, { id_freq: 'never', sqn_other: 'x' }).errors).toEqual([{ questionId: 'sqn_other', questionKey: '', message: expect.stringMatching(/not a question/), code: 'UNKNOWN_QUESTION' }]);
  });

  const byKey = (key: string) => definition.questions.find((question) => question.key === key)!;
  // question key, the answer given, the accepted value or the error message's pattern
  it.each<[string, unknown, { value: unknown } | { error: RegExp }]>([
    ['freq', 'weekly', { value: 'weekly' }],
    ['freq', 'daily', { error: /not one of the choices \(weekly, monthly, never\)/ }],
    ['freq', ['weekly'], { error: /Choose one/ }],
    ['devices', 'ios', { value: ['ios'] }],
    ['devices', ['none', 'ios', 'ios'], { value: ['ios', 'none'] }],
    ['devices', ['ios', 'tv'], { error: /tv is not one of the choices/ }],
    ['devices', [1], { error: /Choose one or more/ }],
    ['consent', 'yes', { value: 'yes' }],
    ['consent', true, { error: /Choose one/ }],
    ['orders', 0, { value: 0 }],
    ['orders', ' 12 ', { value: 12 }],
    ['orders', '1e3', { error: /Enter a number/ }],
    ['orders', 'twelve', { error: /Enter a number/ }],
    ['orders', Number.NaN, { error: /Enter a number/ }],
    ['orders', 2.5, { error: /whole number/ }],
    ['orders', -1, { error: /0 or more/ }],
    ['orders', 1001, { error: /1000 or less/ }],
    ['rating', 5, { value: 5 }],
    ['rating', 6, { error: /5 or less/ }],
    ['rating', 4.5, { error: /whole number/ }],
    ['born', '2000-02-29', { value: '2000-02-29' }],
    ['born', '1900-02-29', { error: /real date/ }],
    ['born', '2001-13-01', { error: /real date/ }],
    ['born', '01/02/2001', { error: /real date/ }],
    ['born', 20010101, { error: /Enter a text/ }],
    ['email', ' ada@example.org ', { value: 'ada@example.org' }],
    ['email', 'ada@', { error: /email address/ }],
    ['spend', 'x'.repeat(500), { value: 'x'.repeat(500) }],
    ['spend', 'x'.repeat(501), { error: /at most 500/ }],
  ])('%s answered %j', (key, value, expected) => {
    const checked = checkAnswer(byKey(key), value);
    if ('value' in expected) expect(checked).toEqual({ value: expected.value });
    else expect('error' in checked && checked.error).toMatch(expected.error);
  });

  it('checks phone numbers and long texts', () => {
    const phone = rules('phone', 'PHONE_NUMBER');
    expect(checkAnswer(phone, '+44 (20) 7946-0958')).toEqual({ value: '+44 (20) 7946-0958' });
    expect(checkAnswer(phone, 'call me')).toHaveProperty('error');
    expect(checkAnswer(phone, '+1')).toHaveProperty('error');
    expect(checkAnswer(rules('long', 'LONG_FORM'), 'y'.repeat(5000))).toEqual({ value: 'y'.repeat(5000) });
    expect(checkAnswer(rules('long', 'LONG_FORM'), 'y'.repeat(5001))).toHaveProperty('error');
  });

  it('gives YES_NO its yes and no when the definition names no choices', () => {
    expect(checkAnswer(rules('plain', 'YES_NO'), 'no')).toEqual({ value: 'no' });
    expect(checkAnswer(rules('plain', 'YES_NO'), 'maybe')).toHaveProperty('error');
  });
});

describe('decideOutcome', () => {
  // answers (all valid) → outcome and what decided it
  it.each<[string, Record<string, unknown>, string, object]>([
    ['a qualifying choice', { id_freq: 'weekly', id_orders: 3 }, 'QUALIFIED', { kind: 'CHOICE', questionKey: 'freq', choiceId: 'weekly', rule: 'QUALIFIES' }],
    ['a disqualifying choice', { id_freq: 'never' }, 'DISQUALIFIED', { kind: 'CHOICE', questionKey: 'freq', choiceId: 'never', rule: 'DISQUALIFIES' }],
    ['a disqualifying range beats an earlier qualifying choice', { id_freq: 'weekly', id_orders: 0 }, 'DISQUALIFIED', { kind: 'RANGE', questionKey: 'orders', rangeIndex: 0 }],
    ['a qualifying range', { id_freq: 'monthly', id_orders: 50, id_spend: 'x' }, 'QUALIFIED', { kind: 'RANGE', questionKey: 'orders', rangeIndex: 1, rule: 'QUALIFIES' }],
    ['neutral answers leave it to the default (review)', { id_freq: 'monthly', id_orders: 5 }, 'NEEDS_REVIEW', { kind: 'DEFAULT', qualifyByDefault: false }],
    ['a multi-select with a disqualifying choice among others', { id_freq: 'monthly', id_orders: 5, id_devices: ['android', 'none'] }, 'DISQUALIFIED', { kind: 'CHOICE', questionKey: 'devices', choiceId: 'none' }],
    ['a multi-select qualifying choice', { id_freq: 'monthly', id_orders: 5, id_devices: ['ios', 'android'] }, 'QUALIFIED', { kind: 'CHOICE', questionKey: 'devices', choiceId: 'android' }],
    ['the first disqualifying rule in question order', { id_freq: 'never', id_consent: 'no' }, 'DISQUALIFIED', { questionKey: 'freq', choiceId: 'never' }],
    ['YES_NO disqualifying', { id_freq: 'weekly', id_orders: 1, id_consent: 'no' }, 'DISQUALIFIED', { questionKey: 'consent', choiceId: 'no' }],
    ['a hidden question\'s answer fires no rule', { id_freq: 'never', id_orders: 0 }, 'DISQUALIFIED', { questionKey: 'freq' }],
  ])('%s', (_what, answers, outcome, decidedBy) => {
    const evaluated = evaluateScreener(definition, answers);
    expect(evaluated.errors).toEqual([]);
    expect(evaluated.result).toEqual({ outcome, decidedBy: expect.objectContaining(decidedBy) });
  });

  it('qualifies by default when no rule fired and qualifyByDefault is true', () => {
    const evaluated = evaluateScreener({ ...definition, qualifyByDefault: true }, { id_freq: 'monthly', id_orders: 5 });
    expect(evaluated.result).toEqual({ outcome: 'QUALIFIED', decidedBy: { kind: 'DEFAULT', qualifyByDefault: true } });
  });

  it('gives no outcome while an answer is invalid', () => {
    expect(evaluateScreener(definition, { id_freq: 'weekly' }).result).toBeNull();
  });

  it('never lets a qualifying answer win over a disqualifying one, over every pair of answers', () => {
    // Every combination of the three frequency choices and a handful of order counts and devices.
    for (const freq of ['weekly', 'monthly', 'never']) {
      for (const orders of [0, 1, 10, 49, 50, 1000]) {
        for (const devices of [[], ['ios'], ['android'], ['none'], ['android', 'none']]) {
          const answers = { id_freq: freq, id_orders: orders, id_spend: 'x', id_devices: devices };
          const { accepted } = checkAnswers(definition, answers);
          const { outcome } = decideOutcome(definition, accepted);
          const disqualified = freq === 'never' || orders === 0 || devices.includes('none');
          const qualified = !disqualified && (freq === 'weekly' || orders >= 50 || devices.includes('android'));
          expect(outcome, JSON.stringify(answers)).toBe(disqualified ? 'DISQUALIFIED' : qualified ? 'QUALIFIED' : 'NEEDS_REVIEW');
        }
      }
    }
  });
});
