import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeProblem, fieldMessage, type Problem, unplacedMessages } from '../api.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Field } from '../components/Field.js';
import { isMasked } from '../components/Masked.js';
import { currencyDigits, formatCents, parseMoney } from '../format.js';
import type { Person } from '../people.js';
import { useSession } from '../session.js';
import { type IncentiveType, incentiveTypes, isProviderBacked, typeLabels } from './states.js';

type Study = Schema<'Study'>;
type Participant = Schema<'Participant'>;
type SendBody = { participantId: string; type: IncentiveType; amountCents?: number; currency: string; customIncentiveValue?: string; budgetId?: string };
type Budget = Schema<'IncentiveBudget'>;

/** The currencies the API takes (docs/api/incentives.md); the list a person picks from. */
const currencies = ['USD', 'EUR', 'GBP', 'CAD', 'AUD', 'NZD', 'CHF', 'SEK', 'NOK', 'DKK', 'JPY', 'BHD'] as const;

const shownPaths = [['type'], ['currency'], ['amountCents'], ['customIncentiveValue'], ['budgetId']] as const;

/** What the confirmation names: the request, and its parts in words. */
interface Pending {
  body: SendBody;
  /** The same key for every try of this one confirmation: a retried request pays once. */
  idempotencyKey: string;
  what: string;
}

/**
 * The person in words, as far as the token may read them: "Dora Tester (dora@example.org)", the
 * email alone without a name, and a plain description when the API masks both.
 */
export function recipientWords(person: Pick<Person, 'name'> | undefined, email: string | null): string {
  const name = person?.name && !isMasked(person.name) ? person.name : undefined;
  const address = email && !isMasked(email) ? email : undefined;
  if (name && address) return `${name} (${address})`;
  if (name || address) return (name ?? address)!;
  if (person?.name || email) return 'this participant (name and email masked: your token may not read personal data)';
  return 'this participant';
}

/**
 * Sends one incentive to a participant (POST /incentives, E-reference "send an incentive"): its
 * type, the budget (a picker of the workspace's budgets: a budget sets the currency), the currency,
 * the amount in it (the API counts its minor unit; nothing is filled in for the person), or
 * for a CUSTOM reward its value in words and an optional amount; the budget. Nothing is sent
 * before a confirmation that names the amount, its currency, the person and the study; the API's errors then
 * show beside the field they name.
 */
export function SendIncentiveForm(props: { participant: Participant; person: Person | undefined; study: Study; onSent(): void; onClose(): void }) {
  const { api } = useSession().session;
  const plan = props.study.studyPlan;
  const [type, setType] = useState<IncentiveType>('MONEY_OR_GIFT_CARD');
  const [amount, setAmount] = useState('');
  const [customValue, setCustomValue] = useState('');
  const [budgetId, setBudgetId] = useState('');
  const [chosenCurrency, setCurrency] = useState('USD');
  const [budgets, setBudgets] = useState<Budget[]>([]);
  // The budgets to pick from (live ones, first page of 100): a budget sets the currency.
  useEffect(() => {
    void api.GET('/incentive-budgets', { params: { query: { size: 100 } } }).then(({ data }) => setBudgets(data?.results ?? []));
  }, [api]);
  // Without a choice the API takes the study plan's budget: its currency applies the same.
  const planBudgetId = plan.incentive?.incentiveBudgetId ?? '';
  const budget = budgets.find((candidate) => candidate.budgetId === (budgetId || planBudgetId));
  const currency = budget?.currency ?? chosenCurrency;
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);
  const [pending, setPending] = useState<Pending | undefined>();
  const heading = useRef<HTMLHeadingElement>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const sendButton = useRef<HTMLButtonElement>(null);
  const recipient = recipientWords(props.person, props.participant.email);
  const studyName = plan.name || 'an untitled study';
  // Keyboard and screen-reader users land on the form that opened.
  useEffect(() => heading.current?.focus(), []);
  // The dialog opens once the state it shows is rendered; showModal moves the focus into it and
  // makes the rest of the page inert until it closes.
  useEffect(() => {
    if (pending && dialog.current && !dialog.current.open) dialog.current.showModal();
  }, [pending]);

  /** Checks what the person typed and opens the confirmation; the API still judges the request. */
  function review(event: Event) {
    event.preventDefault();
    const custom = type === 'CUSTOM';
    const amountCents = amount.trim() === '' ? undefined : parseMoney(amount, currency);
    const value = customValue.trim() || undefined;
    const fail = (path: string, message: string) => setProblem({ status: 0, summary: message, fields: [{ path: [path], message }] });
    const example = currencyDigits(currency) === 0 ? '5000' : '75 or 12.50';
    if (amount.trim() !== '' && amountCents === undefined) return fail('amountCents', `Give an amount in ${currency}, such as ${example}.`);
    // The API's rules (POST /incentives): an amount for every type but CUSTOM; a CUSTOM reward
    // without one says what is given, or the plan does.
    if (!custom && amountCents === undefined) return fail('amountCents', `Give the amount to send, in ${currency}, such as ${example}.`);
    if (custom && amountCents === undefined && !value && !plan.incentive?.defaultCustomIncentiveValue) {
      return fail('customIncentiveValue', 'Say what is given (a gift, a voucher code), or give an amount.');
    }
    setProblem(undefined);
    const given = custom ? (value ?? plan.incentive?.defaultCustomIncentiveValue) : undefined;
    const money = amountCents !== undefined ? `${formatCents(amountCents, currency)} (${currency})` : undefined;
    setPending({
      body: {
        participantId: props.participant.participantId,
        type,
        ...(amountCents !== undefined ? { amountCents } : {}),
        currency,
        ...(custom && value ? { customIncentiveValue: value } : {}),
        ...(budgetId.trim() ? { budgetId: budgetId.trim() } : {}),
      },
      idempotencyKey: crypto.randomUUID(),
      what: [given, money].filter(Boolean).join(' and '),
    });
  }

  /** Closes the confirmation (cancel, Escape, or after sending) and gives the focus back to the form's button. */
  function closeConfirmation() {
    if (dialog.current?.open) dialog.current.close();
    setPending(undefined);
    sendButton.current?.focus();
  }

  async function send() {
    if (!pending) return;
    setBusy(true);
    try {
      unwrap(await api.POST('/incentives', { body: pending.body, headers: { 'Idempotency-Key': pending.idempotencyKey } }));
      dialog.current?.close();
      props.onSent();
    } catch (error) {
      // Beside the field it names, in the form: the confirmation showed what is now refused.
      setProblem(describeProblem(error));
      closeConfirmation();
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="send-incentive-heading" class="panel">
      <h2 id="send-incentive-heading" tabIndex={-1} ref={heading}>
        Send an incentive to {recipient}
      </h2>
      <form onSubmit={review} noValidate>
        <ErrorNotice problem={problem} extra={problem ? unplacedMessages(problem, shownPaths) : []} />
        <Field label="Type" error={fieldMessage(problem, ['type'])}>
          {(control) => (
            <select {...control} value={type} onChange={(event) => setType(event.currentTarget.value as IncentiveType)}>
              {incentiveTypes.map((value) => (
                <option key={value} value={value}>
                  {typeLabels[value]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Budget" error={fieldMessage(problem, ['budgetId'])} hint="Its amount is taken from the budget as it is sent; a budget sets the currency.">
          {(control) => (
            <select {...control} value={budgetId} onChange={(event) => setBudgetId(event.currentTarget.value)}>
              <option value="">{planBudgetId ? "The study plan's" : 'No budget'}</option>
              {budgets.map((candidate) => (
                <option key={candidate.budgetId} value={candidate.budgetId}>
                  {candidate.name} ({candidate.currency}, {formatCents(candidate.remainingCents, candidate.currency)} left)
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Currency" error={fieldMessage(problem, ['currency'])} hint={budget ? "The budget's currency." : undefined}>
          {(control) => (
            <select {...control} value={currency} disabled={budget !== undefined} onChange={(event) => setCurrency(event.currentTarget.value)}>
              {currencies.map((code) => (
                <option key={code} value={code}>
                  {code}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field
          label={`Amount (${currency})`}
          error={fieldMessage(problem, ['amountCents'])}
          hint={
            type === 'CUSTOM'
              ? 'Optional for a custom reward: leave it empty for a thing rather than money.'
              : `In ${currency}, such as ${currencyDigits(currency) === 0 ? '5000' : '75 or 12.50'}.${plan.incentive?.amount !== undefined ? ` The study plan says ${formatCents(Math.round(plan.incentive.amount * 100))}.` : ''}`
          }
        >
          {(control) => <input {...control} inputMode="decimal" autocomplete="off" value={amount} onInput={(event) => setAmount(event.currentTarget.value)} />}
        </Field>
        {type === 'CUSTOM' && (
          <Field label="What is given" error={fieldMessage(problem, ['customIncentiveValue'])} hint="A gift or a voucher code, in words; default: the study plan's.">
            {(control) => <input {...control} value={customValue} maxLength={1000} onInput={(event) => setCustomValue(event.currentTarget.value)} />}
          </Field>
        )}
        <div class="actions">
          <button type="submit" ref={sendButton} disabled={busy}>
            Send incentive…
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Close
          </button>
        </div>
      </form>
      <dialog
        ref={dialog}
        aria-labelledby="confirm-incentive-heading"
        aria-describedby="confirm-incentive-summary"
        onCancel={(event) => {
          // Escape: the same as "Don't send"; the state follows the dialog.
          event.preventDefault();
          if (!busy) closeConfirmation();
        }}
      >
        {pending && (
          <article>
            <header>
              <h2 id="confirm-incentive-heading">Send this incentive?</h2>
            </header>
            <p id="confirm-incentive-summary" data-testid="incentive-confirmation">
              Send <strong>{pending.what}</strong> to <strong>{recipient}</strong> for the study <strong>{studyName}</strong>.
            </p>
            <dl class="facts">
              <div>
                <dt>Type</dt>
                <dd>{typeLabels[pending.body.type]}</dd>
              </div>
              <div>
                <dt>Currency</dt>
                <dd>{pending.body.currency}</dd>
              </div>
              <div>
                <dt>Budget</dt>
                <dd>{budget ? budget.name : planBudgetId ? "The study plan's" : 'None'}</dd>
              </div>
            </dl>
            <p class="muted">
              {isProviderBacked(pending.body.type) ? 'It is ordered at the incentive provider at once. ' : 'It is recorded as sent; the reward is handed over outside the service. '}
              {props.study.status === 'DRAFT' ? 'It can be canceled while the study is a draft.' : 'It cannot be canceled: the study is launched.'}
            </p>
            <footer>
              <button type="button" class="secondary" disabled={busy} onClick={closeConfirmation}>
                Don’t send
              </button>
              <button type="button" aria-busy={busy} disabled={busy} onClick={() => void send()}>
                Send {pending.what}
              </button>
            </footer>
          </article>
        )}
      </dialog>
    </section>
  );
}
