import type { Ref } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { type FilterProperty, matchProperties } from './model.js';

export interface PropertyPickerProps {
  /** The input's id: its `<label for>` names it. */
  id: string;
  properties: readonly FilterProperty[];
  /** The chosen property's key, or '' before one is chosen. */
  value: string;
  onChange(key: string): void;
  describedBy?: string | undefined;
  inputRef?: Ref<HTMLInputElement>;
}

/**
 * The property of a condition, chosen from a list that is grouped (built-in names by property
 * group, custom properties by their own property group) and narrowed by typing: the WAI-ARIA
 * combobox pattern with a listbox popup (an input with role combobox; the options are never
 * focused, the input names the active one with aria-activedescendant).
 *
 * Keyboard: typing narrows the list and opens it; Down and Up move through the options (Down
 * opens a closed list, Alt+Down too); Enter chooses the active option; Escape closes the list and
 * gives back the chosen property's name; Tab leaves without changing the choice. A pointer click
 * on an option chooses it.
 */
export function PropertyPicker({ id, properties, value, onChange, describedBy, inputRef }: PropertyPickerProps) {
  const chosen = properties.find((property) => property.key === value);
  const [text, setText] = useState(chosen?.label ?? '');
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState<string | undefined>();
  // The chosen property's name, once the list of properties knows it (custom ones arrive later).
  useEffect(() => {
    if (!open) setText(chosen?.label ?? '');
  }, [chosen?.label]);

  // The name of the chosen property, unchanged, lists every property (the person opened the list
  // to look); anything typed narrows it.
  const query = chosen && text === chosen.label ? '' : text;
  const matches = useMemo(() => matchProperties(properties, query), [properties, query]);
  const sections = useMemo(() => {
    const bySection = new Map<string, FilterProperty[]>();
    for (const property of matches) bySection.set(property.section, [...(bySection.get(property.section) ?? []), property]);
    return [...bySection];
  }, [matches]);
  const listId = `${id}-list`;
  const optionId = (key: string) => `${id}-option-${key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const activeProperty = open ? matches.find((property) => property.key === active) : undefined;

  useEffect(() => {
    if (activeProperty) document.getElementById(optionId(activeProperty.key))?.scrollIntoView({ block: 'nearest' });
  }, [activeProperty?.key, open]);

  const show = (first?: string) => {
    setOpen(true);
    setActive(first ?? (matches.some((property) => property.key === value) ? value : matches[0]?.key));
  };
  const close = () => {
    setOpen(false);
    setText(chosen?.label ?? '');
  };
  const choose = (property: FilterProperty) => {
    setOpen(false);
    setText(property.label);
    if (property.key !== value) onChange(property.key);
  };
  const move = (step: 1 | -1) => {
    if (matches.length === 0) return;
    const at = matches.findIndex((property) => property.key === active);
    const next = at < 0 ? (step === 1 ? 0 : matches.length - 1) : Math.min(matches.length - 1, Math.max(0, at + step));
    setActive(matches[next]!.key);
  };

  function onKeyDown(event: KeyboardEvent) {
    switch (event.key) {
      case 'ArrowDown':
        event.preventDefault();
        if (!open || event.altKey) show();
        else move(1);
        break;
      case 'ArrowUp':
        event.preventDefault();
        if (open) move(-1);
        else show();
        break;
      case 'Enter':
        // Never submits a form around it: Enter here is a choice.
        if (open) {
          event.preventDefault();
          if (activeProperty) choose(activeProperty);
        }
        break;
      case 'Escape':
        if (open) {
          event.preventDefault();
          close();
        }
        break;
      case 'Tab':
        if (open) close();
        break;
    }
  }

  return (
    <div class="picker">
      <input
        id={id}
        ref={inputRef}
        type="text"
        role="combobox"
        autocomplete="off"
        spellcheck={false}
        placeholder="Type to find a property…"
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls={listId}
        {...(activeProperty ? { 'aria-activedescendant': optionId(activeProperty.key) } : {})}
        {...(describedBy ? { 'aria-describedby': describedBy } : {})}
        value={text}
        onInput={(event) => {
          const typed = event.currentTarget.value;
          setText(typed);
          setOpen(true);
          setActive(matchProperties(properties, typed)[0]?.key);
        }}
        onKeyDown={onKeyDown}
        onClick={() => (open ? undefined : show())}
        onBlur={close}
      />
      <div role="listbox" id={listId} aria-label="Properties" class="picker-list" hidden={!open || matches.length === 0}>
        {sections.map(([section, members]) => {
          const headingId = `${listId}-${section.replace(/[^A-Za-z0-9]/g, '_')}`;
          return (
            <ul key={section} role="group" aria-labelledby={headingId}>
              <li role="presentation" id={headingId} class="picker-section">
                {section}
              </li>
              {members.map((property) => (
                <li
                  key={property.key}
                  id={optionId(property.key)}
                  role="option"
                  aria-selected={property.key === active}
                  class={property.key === value ? 'picker-option picker-chosen' : 'picker-option'}
                  // The input keeps the focus (and the list stays open) while the pointer chooses.
                  onMouseDown={(event) => event.preventDefault()}
                  onClick={() => choose(property)}
                >
                  {property.label}
                </li>
              ))}
            </ul>
          );
        })}
      </div>
      {/* Always present, so assistive technology announces what typing did to the list. */}
      <small class={open && matches.length === 0 ? 'muted picker-status' : 'visually-hidden'} role="status">
        {!open ? '' : matches.length === 0 ? `No property matches “${text}”.` : query ? `${matches.length} ${matches.length === 1 ? 'property matches' : 'properties match'}.` : ''}
      </small>
    </div>
  );
}
