# Reads the resource types that Puppet modules ship in Ruby (lib/puppet/type/*.rb, either
# `Puppet::Type.newtype` or `Puppet::ResourceApi.register_type`) and prints what a catalog
# compile needs of each as JSON on stdout: key attributes, parameters, properties, whether
# the type has providers (then `provider` is an attribute), and its own title patterns with
# the attributes their captures set.
#
# Usage: ruby - MODULEDIR... (this text on stdin). Ordo runs it once per process
# (src/cli/ruby_types.rs). Puppet itself is not needed: the DSL below records what the type
# declares and runs none of its validate/munge blocks; constants and methods of Puppet that
# it does not define answer with an inert stand-in, so a type that reaches for helpers still
# loads. A type that fails to load is reported with its error and left unchecked.

require 'json'

OUT = $stdout
$stdout = $stderr # type code that prints must not garble the JSON

MODULE_DIRS = ARGV.dup.freeze
LIB_DIRS = MODULE_DIRS.flat_map { |d| Dir.glob(File.join(d, '*', 'lib')).sort }.freeze

# An object that accepts any call and any constant: what the types get for the parts of
# Puppet this stand-in does not model (Puppet::Util::..., Facter, provider features ...).
class OrdoInert < Module
  def self.const_missing(name)
    const_set(name, OrdoInert.new)
  end

  def const_missing(name)
    const_set(name, OrdoInert.new)
  end

  def method_missing(*_args)
    self
  end

  def respond_to_missing?(*_args)
    true
  end

  def to_s
    ''
  end

  def to_str
    ''
  end

  def to_ary
    []
  end

  def each(*) end
end

def Object.const_missing(name)
  const_set(name, OrdoInert.new)
end

# `require` of Puppet's files or a module's own (`puppet_x/...`, `puppet/type/x`): the
# module's file when there is one, else nothing (Puppet's own library is not here).
module Kernel
  alias ordo_require require

  def require(path)
    path = path.to_s
    file = LIB_DIRS.map { |l| File.join(l, path.end_with?('.rb') ? path : "#{path}.rb") }.find { |f| File.file?(f) }
    return ordo_require(File.expand_path(file)) if file
    return true if path.start_with?('puppet', 'facter', 'hiera')

    begin
      ordo_require(path)
    rescue LoadError
      true
    end
  end
end

module Puppet
  class Error < RuntimeError; end
  class DevError < Error; end
  class ParseError < Error; end
  class ResourceError < Error; end
  class ExecutionFailure < Error; end

  %i[debug info notice warning err deprecation_warning warn_once].each do |m|
    define_singleton_method(m) { |*_a| nil }
  end

  def self.[](_name)
    nil
  end

  def self.features
    OrdoInert.new
  end

  def self.const_missing(name)
    const_set(name, OrdoInert.new)
  end

  # A parameter or property class: what its block declares.
  class Parameter
    class << self
      attr_accessor :name

      def ordo_values
        @ordo_values ||= superclass.respond_to?(:ordo_values) ? superclass.ordo_values.dup : []
      end

      def newvalues(*values)
        values.each { |v| ordo_values << v.to_s unless v.is_a?(Regexp) }
      end

      def newvalue(value, *_options, &_block)
        newvalues(value)
      end

      def isnamevar
        @ordo_namevar = true
      end

      def isnamevar?
        @ordo_namevar == true
      end

      def const_missing(name)
        const_set(name, OrdoInert.new)
      end

      def method_missing(*_args, &_block)
        nil
      end

      def respond_to_missing?(*_args)
        true
      end
    end

    def method_missing(*_args, &_block)
      nil
    end

    def respond_to_missing?(*_args)
      true
    end

    class Boolean < Parameter
      newvalues(:true, :false, :yes, :no)
    end

    class Path < Parameter; end
    class Package < Parameter; end
  end

  class Property < Parameter
    class Boolean < Property
      newvalues(:true, :false, :yes, :no)
    end
    class List < Property; end
    class OrderedList < List; end
    class KeyValue < Property; end

    class Ensure < Property
      def self.defaultvalues
        newvalues(:present, :absent)
      end
    end
  end

  class Provider
    def self.method_missing(*_args, &_block)
      nil
    end

    def self.respond_to_missing?(*_args)
      true
    end
  end

  # The type DSL.
  class Type
    TYPES = {}

    class << self
      attr_accessor :name

      def ordo_attrs
        @ordo_attrs ||= []
      end

      def ordo_attr(kind, name, options, parent, &block)
        name = name.to_sym
        parent = options[:parent] if options[:parent].is_a?(Class) && options[:parent] <= Puppet::Parameter
        klass = Class.new(parent)
        klass.name = name
        klass.isnamevar if options[:namevar]
        klass.class_eval(&block) if block
        ordo_attrs.reject! { |_, n, _| n == name }
        ordo_attrs << [kind, name, klass]
        klass
      end

      def newparam(name, options = {}, &block)
        ordo_attr(:param, name, options, Puppet::Parameter, &block)
      end

      def newproperty(name, options = {}, &block)
        ordo_attr(:property, name, options, Puppet::Property, &block)
      end

      def ensurable(&block)
        if block
          newproperty(:ensure, parent: Puppet::Property::Ensure, &block)
        else
          newproperty(:ensure, parent: Puppet::Property::Ensure) { defaultvalues }
        end
      end

      def provide(_name, _options = {}, &_block)
        @ordo_providers = true
        Class.new(Puppet::Provider)
      end

      def ordo_providers?
        @ordo_providers == true
      end

      def key_attributes
        ordo_attrs.select { |kind, n, k| kind == :param && (k.isnamevar? || n == :name) }.map { |_, n, _| n }
      end

      def validattr?(name)
        ordo_attrs.any? { |_, n, _| n == name.to_sym }
      end

      def attrclass(name)
        a = ordo_attrs.find { |_, n, _| n == name.to_sym }
        a && a[2]
      end

      def const_missing(name)
        const_set(name, OrdoInert.new)
      end

      def method_missing(*_args, &_block)
        nil
      end

      def respond_to_missing?(*_args)
        true
      end

      def newtype(name, _options = {}, &block)
        klass = Class.new(Puppet::Type)
        klass.name = name.to_sym
        TYPES[name.to_sym] = klass
        klass.class_eval(&block) if block
        klass
      end

      # Another type, loaded from the modules when one of them ships it.
      def type(name)
        name = name.to_sym
        return TYPES[name] if TYPES[name]

        file = LIB_DIRS.map { |l| File.join(l, 'puppet', 'type', "#{name}.rb") }.find { |f| File.file?(f) }
        load(file) if file
        TYPES[name] || OrdoInert.new
      rescue StandardError, ScriptError
        OrdoInert.new
      end
    end

    def method_missing(*_args, &_block)
      nil
    end

    def respond_to_missing?(*_args)
      true
    end
  end

  # The Resource API: every attribute is a parameter (namevar, parameter, init_only) or a
  # property; `title_patterns` name their captures.
  module ResourceApi
    def self.register_type(definition)
      definition = definition.transform_keys(&:to_sym)
      attributes = (definition[:attributes] || {}).transform_keys(&:to_sym)
      type = Puppet::Type.newtype(definition[:name].to_sym) do
        attributes.each do |name, options|
          options = options.transform_keys(&:to_sym)
          behaviour = options[:behaviour] || options[:behavior]
          behaviour = behaviour.to_sym if behaviour
          if %i[namevar parameter init_only].include?(behaviour)
            newparam(name, namevar: behaviour == :namevar)
          else
            newproperty(name)
          end
        end
      end
      type.instance_variable_set(:@ordo_providers, true)
      patterns = definition[:title_patterns]
      if patterns.is_a?(Array)
        list = patterns.map { |p| p.transform_keys(&:to_sym) }.map do |p|
          [p[:pattern], p[:pattern].names.map { |n| [n.to_sym] }]
        end
        type.define_singleton_method(:title_patterns) { list }
      end
      type
    end

    def self.method_missing(*_args, &_block)
      nil
    end

    def self.respond_to_missing?(*_args)
      true
    end
  end
end

# The modules' types, the first module of the modulepath winning a name as in Puppet.
files = {}
LIB_DIRS.each do |lib|
  Dir.glob(File.join(lib, 'puppet', 'type', '*.rb')).sort.each do |f|
    files[File.basename(f, '.rb')] ||= f
  end
end

result = {}
files.each do |name, file|
  begin
    Puppet::Type::TYPES.delete(name.to_sym)
    load(file)
    t = Puppet::Type::TYPES[name.to_sym]
    unless t
      result[name] = { 'error' => "#{file} does not define the type #{name}" }
      next
    end
    has_providers = t.ordo_providers? ||
                    LIB_DIRS.any? { |l| !Dir.glob(File.join(l, 'puppet', 'provider', name, '*.rb')).empty? }
    t.newparam(:provider) if has_providers && !t.validattr?(:provider)
    entry = proc do |_, n, k|
      h = { 'name' => n.to_s }
      h['isnamevar'] = true if k.isnamevar?
      h['values'] = k.ordo_values unless k.ordo_values.empty?
      h
    end
    schema = {
      'key_attributes' => t.key_attributes.map(&:to_s),
      'parameters' => t.ordo_attrs.select { |kind, _, _| kind == :param }.map(&entry),
      'properties' => t.ordo_attrs.select { |kind, _, _| kind == :property }.map(&entry),
    }
    if t.singleton_methods(false).include?(:title_patterns)
      patterns = t.title_patterns
      schema['title_patterns'] = Array(patterns).map do |re, attrs|
        { 'pattern' => re.to_s, 'attributes' => Array(attrs).map { |a| Array(a).first.to_s } }
      end
    end
    result[name] = schema
  rescue StandardError, ScriptError, SystemStackError => e
    result[name] = { 'error' => "#{e.class}: #{e.message}"[0, 300] }
  end
end

OUT.write(JSON.generate(result))
OUT.flush
