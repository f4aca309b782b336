# frozen_string_literal: false
#
# Ordo's `require` for the Ruby it runs (src/ruby/host.rb, src/facts/custom.rb), put before
# either program: `require 'puppet...'` (and `hiera`, `facter`) is satisfied by the program's
# stand-ins, never by a Puppet or Facter installed on the machine; a module's own file of
# that name (`puppet_x/...`, `facter/util/x`) comes from the modules' lib directories, which
# the program puts on the load path.
module Kernel
  alias ordo_original_require require

  def require(name)
    name = name.to_s
    if name =~ %r{\A(puppet|hiera|facter)(/|\z)}
      found = $LOAD_PATH.grep(%r{/lib\z}).map { |d| File.join(d, "#{name}.rb") }.find { |f| File.file?(f) }
      return found ? ordo_original_require(found) : false
    end
    begin
      ordo_original_require(name)
    rescue LoadError
      # Ruby starts without RubyGems (a quarter of a second less); a gem loads it. Then
      # RubyGems' own `require` (which wraps this one) asks again: it activates the gem
      # that holds the file, which puts the gem on the load path.
      raise if defined?(::Gem::Specification) || !ordo_original_require('rubygems')

      require(name)
    end
  end
  private :require
end

