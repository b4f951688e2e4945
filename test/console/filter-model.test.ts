import { searchComparisons, searchNames } from '@recruit-ops/sdk';
import { describe, expect, it } from 'vitest';
import { buildFilter, comparisonsFor, filterProperties, newCondition, newGroup, valueKind } from '../../console/src/filters/model.js';

/** The console's filter model without a browser: what the builder's tree sends, and where each node's errors come back. */
describe('console filter model', () => {
  const properties = filterProperties(['PERSON'], [
    { propertyId: 'prp_age', name: 'Age', propertyType: 'NUMBER', propertyOptions: [], isUnique: false, isPHI: false, isPII: false, description: '', propertyGroupId: 'grp', editableByPerson: false },
    { propertyId: 'prp_team', name: 'Team', propertyType: 'SINGLE_SELECT', propertyOptions: [{ propertyOptionId: 'o1', name: 'Red', color: 'GREEN', order: '1' }], isUnique: false, isPHI: false, isPII: false, description: '', propertyGroupId: 'grp', editableByPerson: false },
  ] as Parameters<typeof filterProperties>[1]);
  const byKey = new Map(properties.map((property) => [property.key, property]));

  it('offers every PERSON name of the document and the custom properties, with the comparisons of their type and the empties', () => {
    expect(properties.filter((property) => property.group === 'PERSON').map((property) => property.ref)).toEqual(
      searchNames.PERSON.map((entry) => ({ propertyGroup: 'PERSON', propertyName: entry.name })),
    );
    expect(byKey.get('custom:prp_team')).toMatchObject({ type: 'select', options: ['Red'], ref: { propertyId: 'prp_team' } });
    expect(comparisonsFor('number')).toEqual([...searchComparisons.number, 'IS_EMPTY', 'IS_NOT_EMPTY']);
    expect(valueKind('datetime', 'BETWEEN')).toBe('momentPair');
    expect(valueKind('number', 'BETWEEN')).toBe('numberPair');
    expect(valueKind('boolean', 'IS_TRUE')).toBe('none');
  });

  it('leaves incomplete conditions and empty groups out, and records each sent node’s path', () => {
    const age = { ...newCondition(), property: 'custom:prp_age', comparison: 'BETWEEN', value: { from: '18', to: '30' } };
    const unfinished = { ...newCondition(), property: 'PERSON:EMAIL', comparison: 'CONTAINS', value: {} };
    const email = { ...newCondition(), property: 'PERSON:EMAIL', comparison: 'IN', value: { text: 'a@x.test, b@x.test' } };
    const optedOut = { ...newCondition(), property: 'PERSON:OPTED_OUT', comparison: 'IS_FALSE', value: {} };
    const emptyGroup = newGroup([]);
    const group = { ...newGroup([unfinished, email, optedOut]), operator: 'OR' as const };
    const root = newGroup([emptyGroup, age, group]);
    const built = buildFilter(root, byKey);
    expect(built.filter).toEqual({
      operator: 'AND',
      filters: [
        { property: { propertyId: 'prp_age' }, comparison: 'BETWEEN', value: [18, 30] },
        {
          operator: 'OR',
          filters: [
            { property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'IN', value: ['a@x.test', 'b@x.test'] },
            { property: { propertyGroup: 'PERSON', propertyName: 'OPTED_OUT' }, comparison: 'IS_FALSE' },
          ],
        },
      ],
    });
    expect(built.paths.get(age.key)).toEqual(['filter', 'filters', '0']);
    expect(built.paths.get(email.key)).toEqual(['filter', 'filters', '1', 'filters', '0']);
    expect(built.paths.get(optedOut.key)).toEqual(['filter', 'filters', '1', 'filters', '1']);
    expect(built.incomplete).toEqual(new Set([unfinished.key]));
    expect(buildFilter(newGroup([unfinished]), byKey).filter).toBeUndefined();
  });
});
