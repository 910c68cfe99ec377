import type { ComponentChildren, InputHTMLAttributes } from 'preact';
import { useState } from 'preact/hooks';

/** Form controls: labelled fields, and the submission of a form to the API. */

export function Field(
  props: { label: string; hint?: string } & InputHTMLAttributes<HTMLInputElement> & {
      name: string;
    },
) {
  const { label, hint, ...rest } = props;
  const id = `f-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} {...rest} aria-describedby={hint ? `${id}-hint` : undefined} />
      {hint ? (
        <small id={`${id}-hint`} class="muted">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

/** A labelled text area that reports each edit to `onInput`. */
export function TextArea(props: {
  id: string;
  label: ComponentChildren;
  rows: number;
  value: string;
  onInput: (v: string) => void;
}) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <textarea
        id={props.id}
        rows={props.rows}
        value={props.value}
        onInput={(e) => props.onInput((e.currentTarget as HTMLTextAreaElement).value)}
      />
    </div>
  );
}

/**
 * A form that sends its data to the API: `onSubmit(send, after)` clears the error and the status
 * line, calls `send` with the form's data, then shows the message it resolves to, resets the form
 * and calls `after`; or shows the error.
 */
export function useFormSubmit() {
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState('');
  function onSubmit(send: (f: FormData) => Promise<string>, after?: () => void) {
    return (e: Event) => {
      e.preventDefault();
      const form = e.currentTarget as HTMLFormElement;
      const f = new FormData(form);
      setError(null);
      setStatus('');
      send(f)
        .then((message) => {
          setStatus(message);
          form.reset();
          after?.();
        })
        .catch((err: unknown) => setError(err));
    };
  }
  return { error, setError, status, onSubmit };
}
