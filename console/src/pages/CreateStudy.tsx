import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useState } from 'preact/hooks';
import { Link, useLocation } from 'wouter-preact';
import { describeProblem, fieldMessage, type Problem, unplacedMessages } from '../api.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Field } from '../components/Field.js';
import { humanize } from '../components/StatusBadge.js';
import { useMay } from '../rights.js';
import { useSession } from '../session.js';

const studyTypes: readonly Schema<'Study'>['studyType'][] = ['INTERVIEWS', 'SURVEY', 'UNMODERATED_TEST', 'GROUP_INTERVIEW'];

/** The form's fields and the body paths the API names them by, so each error lands beside its field. */
const paths = {
  name: ['studyPlan', 'name'],
  studyType: ['studyType'],
  participationLimit: ['studyPlan', 'participationLimit'],
  description: ['studyPlan', 'description'],
  includeScreener: ['studyPlan', 'includeScreener'],
} as const;

/**
 * A new study (it starts in DRAFT). The API judges the input: its 400 is shown field by field
 * (the error's `path`), anything it names elsewhere in the notice above the form.
 */
export function CreateStudyPage() {
  const { api } = useSession().session;
  const mayCreate = useMay('post /studies');
  const [, navigate] = useLocation();
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);

  if (!mayCreate) {
    return (
      <>
        <h1>Create a study</h1>
        <p>Your role may not create studies.</p>
      </>
    );
  }

  async function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const limit = text('participationLimit');
    const description = text('description');
    setBusy(true);
    try {
      const study = unwrap(
        await api.POST('/studies', {
          body: {
            studyType: text('studyType') as (typeof studyTypes)[number],
            recruitmentStrategy: 'IN_SERVICE',
            studyPlan: {
              name: text('name'),
              ...(limit ? { participationLimit: Number(limit) } : {}),
              ...(description ? { description } : {}),
              includeScreener: form.get('includeScreener') === 'on',
            },
          },
        }),
      );
      navigate(`/studies/${encodeURIComponent(study.studyId)}`);
    } catch (error) {
      setProblem(describeProblem(error));
      setBusy(false);
    }
  }

  return (
    <>
      <h1>Create a study</h1>
      <ErrorNotice problem={problem} extra={problem ? unplacedMessages(problem, Object.values(paths)) : []} />
      <form onSubmit={(event) => void submit(event)} noValidate>
        <Field label="Name" hint="The team's name for the study; participants see its external name." error={fieldMessage(problem, paths.name)}>
          {(control) => <input {...control} name="name" type="text" autocomplete="off" />}
        </Field>
        <Field label="Type" error={fieldMessage(problem, paths.studyType)}>
          {(control) => (
            <select {...control} name="studyType">
              {studyTypes.map((type) => (
                <option key={type} value={type}>
                  {humanize(type)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Participation limit" hint="How many people may take part (optional)." error={fieldMessage(problem, paths.participationLimit)}>
          {(control) => <input {...control} name="participationLimit" type="number" inputMode="numeric" />}
        </Field>
        <Field label="Description" error={fieldMessage(problem, paths.description)}>
          {(control) => <textarea {...control} name="description" rows={3} />}
        </Field>
        <fieldset>
          <label>
            <input type="checkbox" name="includeScreener" /> Give it a screener
          </label>
        </fieldset>
        <div class="actions">
          <button type="submit" aria-busy={busy} disabled={busy}>
            Create study
          </button>
          <Link href="/studies" class="secondary">
            Cancel
          </Link>
        </div>
      </form>
    </>
  );
}
