import { unwrap } from '@recruit-ops/sdk/browser';
import { useEffect, useId, useRef } from 'preact/hooks';
import type { Problem } from '../api.js';
import { humanize } from '../components/StatusBadge.js';
import { useLoad } from '../hooks.js';
import { useSession } from '../session.js';
import { PropertyPicker } from './PropertyPicker.js';
import {
  type BuiltFilter,
  comparisonLabel,
  comparisonsFor,
  countConditions,
  type DraftCondition,
  type DraftGroup,
  type DraftValue,
  type FilterProperty,
  filterLimit,
  groupLevelLimit,
  newCondition,
  newGroup,
  updateItem,
  valueKind,
} from './model.js';

export interface FilterBuilderProps {
  root: DraftGroup;
  onChange(root: DraftGroup): void;
  properties: readonly FilterProperty[];
  /** What buildFilter made of `root`: where each node went in the request, and what is incomplete. */
  built: BuiltFilter;
  /** The API's answer to the last search with this filter: its errors are shown beside the node they name. */
  problem: Problem | undefined;
}

/**
 * The condition whose Property control takes the focus when it appears: the one just added, so a
 * keyboard user goes on from "Add condition" or "Add group" to what it added.
 */
let focusOnMount: string | undefined;

const startsWith = (path: readonly string[], prefix: readonly string[]) => prefix.every((part, index) => path[index] === part);

/** The problem's messages that name this condition or a value inside it. */
function conditionMessages(problem: Problem | undefined, path: readonly string[] | undefined): string[] {
  if (!problem || !path) return [];
  return problem.fields.filter((item) => startsWith(item.path, path)).map((item) => item.message);
}

/** The messages that name the group itself (its operator, its list), not a condition inside it. */
function groupMessages(problem: Problem | undefined, path: readonly string[] | undefined): string[] {
  if (!problem || !path) return [];
  return problem.fields
    .filter((item) => startsWith(item.path, path) && (item.path.length === path.length || (item.path.length === path.length + 1 && ['operator', 'filters'].includes(item.path[path.length]!))))
    .map((item) => item.message);
}

/**
 * The filter language as a form: nested AND/OR groups of conditions (property, comparison, value
 * fitting the property's type), up to the API's limits (filterLimits). Every control has a label;
 * the API's errors appear beside the condition or group whose path they give.
 */
export function FilterBuilder(props: FilterBuilderProps) {
  const total = countConditions(props.root);
  const byKey = new Map(props.properties.map((property) => [property.key, property]));
  return (
    <div class="filter-builder">
      <GroupEditor {...props} group={props.root} level={0} number="" byKey={byKey} mayAddCondition={total < filterLimit} />
      {total >= filterLimit && <p class="muted">A filter holds at most {filterLimit} conditions.</p>}
    </div>
  );
}

interface NodeProps extends FilterBuilderProps {
  level: number;
  /** "2.1": where the node is, for its label. */
  number: string;
  byKey: ReadonlyMap<string, FilterProperty>;
  mayAddCondition: boolean;
}

function GroupEditor(props: NodeProps & { group: DraftGroup }) {
  const { group, level, number, root, onChange } = props;
  const operatorId = useId();
  const change = (next: DraftGroup) => onChange(level === 0 ? next : updateItem(root, group.key, () => next));
  const messages = groupMessages(props.problem, props.built.paths.get(group.key));
  const name = level === 0 ? 'The filter' : `Group ${number}`;
  const errorId = `${operatorId}-error`;
  return (
    <fieldset class={level === 0 ? 'filter-group filter-root' : 'filter-group'} aria-describedby={messages.length > 0 ? errorId : undefined}>
      <legend>{name}</legend>
      <div class="filter-group-head">
        <label for={operatorId}>{level === 0 ? 'People match' : 'This group matches'}</label>
        <select id={operatorId} value={group.operator} onChange={(event) => change({ ...group, operator: event.currentTarget.value === 'OR' ? 'OR' : 'AND' })}>
          <option value="AND">all of these conditions (AND)</option>
          <option value="OR">any of these conditions (OR)</option>
        </select>
        {level > 0 && (
          <button type="button" class="secondary outline" onClick={() => onChange(updateItem(root, group.key, () => undefined))}>
            Remove group {number}
          </button>
        )}
      </div>
      {messages.length > 0 && (
        <p id={errorId} class="field-error">
          {messages.join(' ')}
        </p>
      )}
      {group.items.length === 0 && <p class="muted">No condition: every {level === 0 ? 'one' : 'row'} matches.</p>}
      <ol class="filter-items">
        {group.items.map((item, index) => {
          const itemNumber = number ? `${number}.${index + 1}` : String(index + 1);
          return (
            <li key={item.key}>
              {item.kind === 'group' ? <GroupEditor {...props} group={item} level={level + 1} number={itemNumber} /> : <ConditionEditor {...props} condition={item} number={itemNumber} />}
            </li>
          );
        })}
      </ol>
      <div class="actions">
        <button
          type="button"
          class="secondary"
          disabled={!props.mayAddCondition}
          onClick={() => {
            const added = newCondition();
            focusOnMount = added.key;
            change({ ...group, items: [...group.items, added] });
          }}
        >
          Add condition{level > 0 ? ` to group ${number}` : ''}
        </button>
        {level < groupLevelLimit && (
          <button
            type="button"
            class="secondary"
            disabled={!props.mayAddCondition}
            onClick={() => {
              const added = newGroup();
              focusOnMount = added.items[0]?.key;
              change({ ...group, items: [...group.items, added] });
            }}
          >
            Add group{level > 0 ? ` to group ${number}` : ''}
          </button>
        )}
      </div>
    </fieldset>
  );
}

function ConditionEditor(props: NodeProps & { condition: DraftCondition }) {
  const { condition, number, root, onChange, byKey } = props;
  const id = useId();
  const property = byKey.get(condition.property);
  const set = (next: DraftCondition) => onChange(updateItem(root, condition.key, () => next));
  const messages = conditionMessages(props.problem, props.built.paths.get(condition.key));
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const invalid = messages.length > 0 ? { 'aria-invalid': 'true' as const, 'aria-describedby': errorId } : {};
  const comparisons = property ? comparisonsFor(property.type) : [];
  const propertyControl = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (focusOnMount !== condition.key) return;
    focusOnMount = undefined;
    propertyControl.current?.focus();
  }, []);

  return (
    <fieldset class="filter-condition">
      <legend class="visually-hidden">Condition {number}</legend>
      <div class="filter-condition-row">
        <div class="filter-control filter-property">
          <label for={`${id}-property`}>Property</label>
          <PropertyPicker
            id={`${id}-property`}
            inputRef={propertyControl}
            properties={props.properties}
            value={condition.property}
            describedBy={property?.meaning ? hintId : undefined}
            onChange={(key) => {
              const chosen = byKey.get(key);
              set({ ...condition, property: key, comparison: chosen ? comparisonsFor(chosen.type)[0]! : '', value: {} });
            }}
          />
        </div>
        <div class="filter-control">
          <label for={`${id}-comparison`}>Comparison</label>
          <select
            id={`${id}-comparison`}
            value={condition.comparison}
            disabled={!property}
            onChange={(event) => {
              const comparison = event.currentTarget.value;
              // A value entered for another kind of input does not carry over (a day is no number).
              const keep = property && valueKind(property.type, comparison) === valueKind(property.type, condition.comparison);
              set({ ...condition, comparison, value: keep ? condition.value : {} });
            }}
          >
            {comparisons.map((comparison) => (
              <option key={comparison} value={comparison}>
                {comparisonLabel(comparison)}
              </option>
            ))}
          </select>
        </div>
        {property && condition.comparison && <ValueEditor property={property} comparison={condition.comparison} value={condition.value} id={id} invalid={invalid} onChange={(value) => set({ ...condition, value })} />}
        <div class="filter-control filter-remove">
          <button type="button" class="secondary outline" onClick={() => onChange(updateItem(root, condition.key, () => undefined))}>
            Remove condition {number}
          </button>
        </div>
      </div>
      {property?.meaning && (
        <small id={hintId} class="muted">
          {property.label}: {property.meaning}
        </small>
      )}
      {messages.length > 0 && (
        <small id={errorId} class="field-error" role="alert">
          {messages.join(' ')}
        </small>
      )}
      {props.built.incomplete.has(condition.key) && property && <small class="muted"> Not applied until a value is entered.</small>}
    </fieldset>
  );
}

interface ValueEditorProps {
  property: FilterProperty;
  comparison: string;
  value: DraftValue;
  id: string;
  invalid: { 'aria-invalid'?: 'true'; 'aria-describedby'?: string };
  onChange(value: DraftValue): void;
}

function Input({ id, label, type = 'text', value, onInput, invalid, ...rest }: { id: string; label: string; type?: string; value: string | undefined; onInput(value: string): void; invalid: ValueEditorProps['invalid']; step?: string; min?: string; placeholder?: string }) {
  return (
    <div class="filter-control">
      <label for={id}>{label}</label>
      <input id={id} type={type} value={value ?? ''} onInput={(event) => onInput(event.currentTarget.value)} {...invalid} {...rest} />
    </div>
  );
}

function ValueEditor({ property, comparison, value, id, invalid, onChange }: ValueEditorProps) {
  const kind = valueKind(property.type, comparison);
  const field = (name: keyof DraftValue) => (text: string) => onChange({ ...value, [name]: text });
  switch (kind) {
    case 'none':
      return null;
    case 'text':
      return <Input id={`${id}-value`} label="Value" value={value.text} onInput={field('text')} invalid={invalid} />;
    case 'number':
      return <Input id={`${id}-value`} label="Value" type="number" step="any" value={value.text} onInput={field('text')} invalid={invalid} />;
    case 'days':
      return <Input id={`${id}-value`} label="Days" type="number" step="1" min="0" value={value.text} onInput={field('text')} invalid={invalid} />;
    case 'numberPair':
      return (
        <>
          <Input id={`${id}-from`} label="From" type="number" step="any" value={value.from} onInput={field('from')} invalid={invalid} />
          <Input id={`${id}-to`} label="To" type="number" step="any" value={value.to} onInput={field('to')} invalid={invalid} />
        </>
      );
    case 'moment':
      return (
        <>
          <Input id={`${id}-value`} label="Date" type="date" value={value.text} onInput={field('text')} invalid={invalid} />
          <Input id={`${id}-time`} label="Time (optional)" type="time" value={value.time} onInput={field('time')} invalid={invalid} />
        </>
      );
    case 'momentPair':
      return (
        <>
          <Input id={`${id}-from`} label="From date" type="date" value={value.from} onInput={field('from')} invalid={invalid} />
          <Input id={`${id}-from-time`} label="From time (optional)" type="time" value={value.fromTime} onInput={field('fromTime')} invalid={invalid} />
          <Input id={`${id}-to`} label="To date" type="date" value={value.to} onInput={field('to')} invalid={invalid} />
          <Input id={`${id}-to-time`} label="To time (optional)" type="time" value={value.toTime} onInput={field('toTime')} invalid={invalid} />
        </>
      );
    case 'list':
      return <Input id={`${id}-value`} label="Values, separated by commas" value={value.text} onInput={field('text')} invalid={invalid} />;
    case 'countries':
      return <Input id={`${id}-value`} label="Country codes (ISO 3166, separated by commas)" placeholder="DE, FR" value={value.text} onInput={field('text')} invalid={invalid} />;
    case 'location':
      return (
        <>
          <Input id={`${id}-lat`} label="Latitude" type="number" step="any" value={value.lat} onInput={field('lat')} invalid={invalid} />
          <Input id={`${id}-lng`} label="Longitude" type="number" step="any" value={value.lng} onInput={field('lng')} invalid={invalid} />
          <Input id={`${id}-km`} label="Within km" type="number" step="any" min="0" value={value.km} onInput={field('km')} invalid={invalid} />
        </>
      );
    case 'options':
      if (property.type === 'membership') return <MembershipEditor property={property} value={value} id={id} invalid={invalid} onChange={onChange} />;
      return <OptionsEditor id={id} options={(property.options ?? []).map((option) => ({ value: option, label: property.type === 'enum' ? humanize(option) : option }))} value={value} invalid={invalid} onChange={onChange} />;
  }
}

function OptionsEditor({ id, options, value, invalid, onChange }: { id: string; options: { value: string; label: string }[]; value: DraftValue; invalid: ValueEditorProps['invalid']; onChange(value: DraftValue): void }) {
  const chosen = new Set(value.chosen ?? []);
  if (options.length === 0) return <p class="muted filter-control">There are no values to choose from.</p>;
  return (
    <fieldset class="filter-control filter-options" {...(invalid['aria-describedby'] ? { 'aria-describedby': invalid['aria-describedby'] } : {})}>
      <legend>Values</legend>
      {options.map((option, index) => (
        <label key={option.value} for={`${id}-option-${index}`}>
          <input
            id={`${id}-option-${index}`}
            type="checkbox"
            checked={chosen.has(option.value)}
            onChange={(event) => {
              const next = new Set(chosen);
              if (event.currentTarget.checked) next.add(option.value);
              else next.delete(option.value);
              onChange({ ...value, chosen: options.map((candidate) => candidate.value).filter((candidate) => next.has(candidate)) });
            }}
          />
          {option.label}
        </label>
      ))}
    </fieldset>
  );
}

/** The lists a membership's ids come from; other sets (referral codes) are typed. */
type MembershipSource = 'studies' | 'segments' | 'populations';
const membershipSources: Record<string, MembershipSource> = {
  'PERSON:STUDY_MEMBERSHIP': 'studies',
  'PERSON:SEGMENT_MEMBERSHIP': 'segments',
  'PERSON:POPULATION_MEMBERSHIP': 'populations',
  'PERSON:PANEL_MEMBERSHIP': 'populations',
};

function MembershipEditor({ property, value, id, invalid, onChange }: Omit<ValueEditorProps, 'comparison'>) {
  const source = membershipSources[property.key];
  if (!source)
    return (
      <Input
        id={`${id}-value`}
        label="Values, separated by commas"
        value={value.text}
        onInput={(text) => onChange({ ...value, text, chosen: text.split(',').map((part) => part.trim()).filter(Boolean) })}
        invalid={invalid}
      />
    );
  return <MembershipOptions source={source} value={value} id={id} invalid={invalid} onChange={onChange} />;
}

function MembershipOptions({ source, value, id, invalid, onChange }: { source: MembershipSource; value: DraftValue; id: string; invalid: ValueEditorProps['invalid']; onChange(value: DraftValue): void }) {
  const { api } = useSession().session;
  const query = { params: { query: { size: 100 } } };
  const loaded = useLoad(async (): Promise<{ value: string; label: string }[]> => {
    if (source === 'studies') return unwrap(await api.GET('/studies', query)).results.map((study) => ({ value: study.studyId, label: study.studyPlan.name || 'Untitled study' }));
    if (source === 'segments') return unwrap(await api.GET('/segments', query)).results.map((segment) => ({ value: segment.segmentId, label: segment.name }));
    return unwrap(await api.GET('/populations', query)).results.map((population) => ({ value: population.populationId, label: population.name }));
  }, [api, source]);
  if (loaded.problem) return <p class="field-error filter-control">The {source} could not be loaded: {loaded.problem.summary}</p>;
  if (!loaded.data) return <p class="filter-control" aria-busy="true">Loading the {source}…</p>;
  return <OptionsEditor id={id} options={loaded.data} value={value} invalid={invalid} onChange={onChange} />;
}

