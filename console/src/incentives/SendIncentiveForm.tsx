import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeProblem, fieldMessage, type Problem, unplacedMessages } from '../api.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Field } from '../components/Field.js';
import { useSession } from '../session.js';
import { type IncentiveType, incentiveTypes, parseDollars, typeLabels } from './states.js';

type Study = Schema<'Study'>;
type Participant = Schema<'Participant'>;

const shownPaths = [['type'], ['amountCents'], ['customIncentiveValue'], ['budgetId']] as const;

/**
 * Sends one incentive to a participant (POST /incentives, E-reference "send an incentive"): its
 * type, the amount in US dollars (the API counts cents), or for a CUSTOM reward its value in words
 * and an optional amount; the budget. The API's errors show beside the field they name.
 */
export function SendIncentiveForm(props: { participant: Participant; study: Study; onSent(): void; onClose(): void }) {
  const { api } = useSession().session;
  const planIncentive = props.study.studyPlan.incentive;
  const [type, setType] = useState<IncentiveType>('MONEY_OR_GIFT_CARD');
  const [amount, setAmount] = useState(planIncentive?.amount !== undefined ? String(planIncentive.amount) : '');
  const [customValue, setCustomValue] = useState('');
  const [budgetId, setBudgetId] = useState('');
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const name = props.participant.email ?? props.participant.participantId;
  // Keyboard and screen-reader users land on the form that opened.
  useEffect(() => heading.current?.focus(), []);

  async function submit(event: Event) {
    event.preventDefault();
    const custom = type === 'CUSTOM';
    const amountCents = amount.trim() === '' ? undefined : parseDollars(amount);
    if (amount.trim() !== '' && amountCents === undefined) {
      setProblem({ status: 0, summary: 'The amount is not valid.', fields: [{ path: ['amountCents'], message: 'Give an amount in dollars, such as 75 or 12.50.' }] });
      return;
    }
    setBusy(true);
    setProblem(undefined);
    try {
      unwrap(
        await api.POST('/incentives', {
          body: {
            participantId: props.participant.participantId,
            type,
            ...(amountCents !== undefined ? { amountCents } : {}),
            ...(custom && customValue.trim() ? { customIncentiveValue: customValue.trim() } : {}),
            ...(budgetId.trim() ? { budgetId: budgetId.trim() } : {}),
          },
          // One click pays once, even if the request is retried.
          headers: { 'Idempotency-Key': crypto.randomUUID() },
        }),
      );
      props.onSent();
    } catch (error) {
      setProblem(describeProblem(error));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="send-incentive-heading" class="panel">
      <h2 id="send-incentive-heading" tabIndex={-1} ref={heading}>
        Send an incentive to {name}
      </h2>
      <form onSubmit={(event) => void submit(event)} noValidate>
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
        <Field
          label="Amount (USD)"
          error={fieldMessage(problem, ['amountCents'])}
          hint={type === 'CUSTOM' ? 'Optional for a custom reward: leave it empty for a thing rather than money.' : 'In dollars, such as 75 or 12.50.'}
        >
          {(control) => <input {...control} inputMode="decimal" value={amount} onInput={(event) => setAmount(event.currentTarget.value)} />}
        </Field>
        {type === 'CUSTOM' && (
          <Field label="What is given" error={fieldMessage(problem, ['customIncentiveValue'])} hint="A gift or a voucher code, in words; default: the study plan's.">
            {(control) => <input {...control} value={customValue} maxLength={1000} onInput={(event) => setCustomValue(event.currentTarget.value)} />}
          </Field>
        )}
        <Field label="Budget" error={fieldMessage(problem, ['budgetId'])} hint="Optional; default: the study plan's incentive budget.">
          {(control) => <input {...control} value={budgetId} maxLength={100} onInput={(event) => setBudgetId(event.currentTarget.value)} />}
        </Field>
        <div class="actions">
          <button type="submit" disabled={busy} aria-busy={busy}>
            Send incentive
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Close
          </button>
        </div>
      </form>
    </section>
  );
}
