import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

export interface FieldProps {
  label: string;
  /** The API's message for this field (fieldMessage(problem, path)); shown under it and tied to it for assistive technology. */
  error?: string | undefined;
  hint?: string;
  /** The control, given the id, description and invalid state to carry. */
  children: (control: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: 'true' }) => ComponentChildren;
}

/**
 * A labelled form control with its hint and its error next to it. The control is a render
 * function so any input, select or textarea gets the label's id and the error's description:
 *
 * <Field label="Name" error={fieldMessage(problem, ['studyPlan', 'name'])}>
 *   {(control) => <input {...control} name="name" required />}
 * </Field>
 */
export function Field({ label, error, hint, children }: FieldProps) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [hint ? hintId : undefined, error ? errorId : undefined].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children({ id, ...(describedBy ? { 'aria-describedby': describedBy } : {}), ...(error ? { 'aria-invalid': 'true' as const } : {}) })}
      {hint && (
        <small id={hintId} class="muted">
          {hint}
        </small>
      )}
      {error && (
        <small id={errorId} class="field-error">
          {error}
        </small>
      )}
    </div>
  );
}
